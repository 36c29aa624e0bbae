/**
 * The schedule on a store several gateways share (as store postgres is):
 * two schedulers on one store stand for two gateways. A job one of them
 * added is read by the other within poll_seconds, jobs or none, so it runs
 * even when the gateway that added it is gone; when both wake for the same
 * due run, one claims it and the other does not run it. On a store of this
 * process alone nothing polls: no timer while there is no job.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadCron } from "../../src/features/cron/schedule.js";
import type { Job } from "../../src/features/cron/jobs.js";
import { CronScheduler } from "../../src/features/cron/scheduler.js";
import { silentLogger } from "../../src/log.js";
import { type FeatureStateStore, MemoryFeatureState, stateView } from "../../src/session/feature-state.js";
import { ManualClock, ManualTimers } from "../support/timers.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const KEY = "agent:main:http:s";
const POLL_MS = 5_000;
// croner is loaded with the first job; loaded here first, so a flush of the event loop is enough for a run.
beforeAll(() => loadCron());

const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** One store, as a database shared by gateways is: `shared` set. */
function sharedStore(): FeatureStateStore {
  const inner = new MemoryFeatureState();
  return {
    shared: true,
    get: (n, k) => inner.get(n, k),
    list: (n) => inner.list(n),
    put: (n, k, v, e) => inner.put(n, k, v, e),
    delete: (n, k, e) => inner.delete(n, k, e),
    close: () => inner.close(),
  };
}

const oneShot = (atMs: number): Job => ({
  id: "j1",
  name: "j",
  enabled: true,
  schedule: { kind: "at", atMs },
  message: "m",
  agentId: "main",
  sessionKey: KEY,
  nextRunAtMs: atMs,
  createdAtMs: T0,
  updatedAtMs: T0,
  deleteAfterRun: true,
});

const everyMinute = (): Job => ({ ...oneShot(T0 + 60_000), schedule: { kind: "every", everyMs: 60_000, fromMs: T0 }, deleteAfterRun: false });

/** A gateway's scheduler on `store`: its own timers, the shared clock, its runs counted. */
function gateway(store: FeatureStateStore, clock: ManualClock) {
  const timers = new ManualTimers();
  const runs: number[] = [];
  const scheduler = new CronScheduler({
    state: stateView(store, "cron"),
    timer: timers.timer,
    clock,
    logger: silentLogger,
    track: () => {},
    catchUpMs: 3_600_000,
    pollMs: POLL_MS,
    run: async (_job, due) => {
      runs.push(due);
    },
    note: async () => {},
  });
  return { timers, runs, scheduler };
}

describe("the schedule on a store other gateways share", () => {
  it("a job another gateway added (and left behind) is read within poll_seconds and runs here, once", async () => {
    const store = sharedStore();
    const clock = new ManualClock(T0);
    const here = gateway(store, clock);
    await here.scheduler.start();
    await flush();
    // No job yet: the timer still reads the jobs again after poll_seconds.
    expect(here.timers.pending().map((t) => t.ms)).toEqual([POLL_MS]);
    // Another gateway adds a job due in a minute, then dies before it is due.
    await stateView(store, "cron").put("j1", oneShot(T0 + 60_000), 0);
    clock.advance(POLL_MS);
    here.timers.fireAll();
    await flush();
    // Read: the timer now waits for the job's time (but never longer than poll_seconds).
    expect(here.timers.pending().map((t) => t.ms)).toEqual([POLL_MS]);
    clock.advance(60_000 - POLL_MS);
    here.timers.fireAll();
    await flush();
    expect(here.runs).toEqual([T0 + 60_000]);
    // The one-shot is gone once it ran; later reads find nothing to run.
    expect(await stateView(store, "cron").list()).toEqual([]);
    clock.advance(POLL_MS);
    here.timers.fireAll();
    await flush();
    expect(here.runs).toEqual([T0 + 60_000]);
    here.scheduler.stop();
  });

  it("two gateways waking for the same due runs: each run is claimed by one and run once", async () => {
    const store = sharedStore();
    const clock = new ManualClock(T0);
    await stateView(store, "cron").put("j1", everyMinute(), 0);
    const a = gateway(store, clock);
    const b = gateway(store, clock);
    await a.scheduler.start();
    await b.scheduler.start();
    for (let minute = 1; minute <= 5; minute++) {
      await flush();
      clock.advance(60_000);
      // Both timers run out at the same moment, as two gateways' do.
      a.timers.fireAll();
      b.timers.fireAll();
      await flush();
    }
    const dues = [...a.runs, ...b.runs].sort((x, y) => x - y);
    expect(dues).toEqual([1, 2, 3, 4, 5].map((m) => T0 + m * 60_000));
    a.scheduler.stop();
    b.scheduler.stop();
  });

  it("on a store of this process alone nothing polls: no timer while there is no job", async () => {
    const clock = new ManualClock(T0);
    const timers = new ManualTimers();
    const scheduler = new CronScheduler({
      state: stateView(new MemoryFeatureState(), "cron"),
      timer: timers.timer,
      clock,
      logger: silentLogger,
      track: () => {},
      catchUpMs: 3_600_000,
      pollMs: POLL_MS,
      run: async () => {},
      note: async () => {},
    });
    await scheduler.start();
    await flush();
    expect(timers.pending()).toEqual([]);
  });
});
