// biome-ignore-all lint/suspicious/noExplicitAny: the tool's results and stored jobs, read as the tests check them
/**
 * What a review of the schedule found, each now a rule: a job's run never
 * overlaps its next (a stuck run makes the next wait, not stack); a timer
 * that fires long after its time follows the catch-up rule; a subagent's job
 * runs as the conversation's own agent; enabling or rescheduling sets the
 * next due time afresh (none for a one-shot whose time passed, refused for
 * an expression that never comes); schedules reach at most ten years. Also
 * two memory searches at once on one index.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cronTool } from "../../src/features/cron/cron-tool.js";
import type { Job } from "../../src/features/cron/jobs.js";
import { CronScheduler } from "../../src/features/cron/scheduler.js";
import { MemoryIndex } from "../../src/features/memory/memory-index.js";
import { silentLogger } from "../../src/log.js";
import { MemoryFeatureState, stateView } from "../../src/session/feature-state.js";
import { Workspace } from "../../src/workspace/workspace.js";
import { tempDir } from "../support/project.js";
import { ManualClock, ManualTimers } from "../support/timers.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const KEY = "agent:main:http:s";
const limits = { catch_up_minutes: 60, poll_seconds: 30, max_jobs: 1000, max_jobs_per_session: 50 };
const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

function toolFor(state: ReturnType<typeof stateView>, clock: ManualClock) {
  const tool = cronTool({ state, limits, now: clock.now, changed: () => {} }) as any;
  return (args: Record<string, unknown>, ctx: { agentId?: string; sessionKey?: string } = {}) =>
    tool.execute(args, { agentId: "main", sessionKey: KEY, turnId: "t", callId: "c", signal: new AbortController().signal, state: {}, publish() {}, ...ctx });
}

const everyMinute = (over: Partial<Job> = {}): Job => ({
  id: "j1",
  name: "j",
  enabled: true,
  schedule: { kind: "every", everyMs: 60_000, fromMs: T0 },
  message: "m",
  agentId: "main",
  sessionKey: KEY,
  nextRunAtMs: T0 + 60_000,
  createdAtMs: T0,
  updatedAtMs: T0,
  deleteAfterRun: false,
  ...over,
});

function scheduler(
  state: ReturnType<typeof stateView>,
  clock: ManualClock,
  timers: ManualTimers,
  run: (lateMs: number) => Promise<void>,
  catchUpMs = 3_600_000,
) {
  return new CronScheduler({
    state,
    timer: timers.timer,
    clock,
    logger: silentLogger,
    track: () => {},
    catchUpMs,
    run: (_job, _due, late) => run(late),
    note: async () => {},
  });
}

describe("the schedule, after review", () => {
  it("a run that outlasts its interval makes the next wait: one run at a time, never stacked", async () => {
    const state = stateView(new MemoryFeatureState(), "cron");
    await state.put("j1", everyMinute(), 0);
    const clock = new ManualClock(T0);
    const timers = new ManualTimers();
    let started = 0;
    let finish!: () => void;
    const s = scheduler(state, clock, timers, () => {
      started++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await s.start();
    for (let i = 1; i <= 5; i++) {
      await flush();
      clock.advance(60_000);
      timers.fireAll();
      await flush();
    }
    expect(started).toBe(1);
    finish();
    await flush();
    timers.fireAll();
    await flush();
    expect(started).toBe(2);
  });

  it("a timer that fires hours late follows the catch-up rule: skipped past catch_up, late within it", async () => {
    const state = stateView(new MemoryFeatureState(), "cron");
    await state.put("j1", everyMinute(), 0);
    const clock = new ManualClock(T0);
    const timers = new ManualTimers();
    const lates: number[] = [];
    const s = scheduler(
      state,
      clock,
      timers,
      async (late) => {
        lates.push(late);
      },
      3_600_000,
    );
    await s.start();
    await flush();
    clock.advance(10 * 3_600_000);
    timers.fireAll();
    await flush();
    expect(lates).toEqual([]);
    expect(((await state.get("j1"))!.value as Job).lastStatus).toBe("skipped");
  });

  it("a subagent's job runs as the conversation's own agent, in the conversation", async () => {
    const state = stateView(new MemoryFeatureState(), "cron");
    await toolFor(state, new ManualClock(T0))({ action: "add", message: "x", at_seconds: 60 }, { agentId: "helper", sessionKey: `${KEY}:subagent:abc` });
    const [entry] = await state.list();
    expect(entry!.value).toMatchObject({ sessionKey: KEY, agentId: "main" });
  });

  it("enabling a one-shot whose time passed leaves it no run; an expression that never comes is refused; at most ten years out", async () => {
    const state = stateView(new MemoryFeatureState(), "cron");
    const clock = new ManualClock(T0);
    const call = toolFor(state, clock);
    await call({ action: "add", message: "once", at_seconds: 60 });
    const id = (await state.list())[0]!.key;
    await call({ action: "disable", job_id: id });
    clock.advance(3_600_000);
    await call({ action: "enable", job_id: id });
    expect(((await state.get(id))!.value as Job).nextRunAtMs).toBeUndefined();
    await call({ action: "add", message: "daily", every_seconds: 3600 });
    const daily = (await state.list()).find((e) => (e.value as Job).message === "daily")!.key;
    const never = await call({ action: "update", job_id: daily, cron_expr: "0 0 30 2 *" });
    expect(never.forLLM).toBe('cron_expr: "0 0 30 2 *" never comes (no date matches it)');
    const moved = await call({ action: "update", job_id: daily, cron_expr: "0 9 * * *" });
    expect(moved.isError).toBe(false);
    expect(((await state.get(daily))!.value as Job).nextRunAtMs).toBe(Date.parse("2026-12-02T09:00:00Z"));
    // The tool engine checks the arguments against the schema: beyond ten years is refused there.
    const tool = cronTool({ state, limits, now: clock.now, changed: () => {} });
    expect(tool.parameters.safeParse({ action: "add", message: "x", at_seconds: 9_000_000_000_000 }).success).toBe(false);
    expect(tool.parameters.safeParse({ action: "add", message: "x", at_seconds: 10 * 365 * 24 * 3600 }).success).toBe(true);
  });
});

describe("memory_search, after review", () => {
  it("two searches at once on one index both answer (files are indexed once)", async () => {
    const root = tempDir();
    mkdirSync(path.join(root, "memory"), { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(path.join(root, "memory", `n${i}.md`), `note ${i} about tea\n\nmore tea\n`);
    const workspace = await Workspace.open({ root, restrict: true, readOutside: false, readPaths: [], writePaths: [] });
    const index = new MemoryIndex({ max_files: 2000, max_bytes: 1 << 24 });
    const signal = new AbortController().signal;
    const [tea, note] = await Promise.all([index.query(workspace, "tea", 5, signal), index.query(workspace, "note", 5, signal)]);
    expect(tea.hits).toHaveLength(5);
    expect(note.files).toBe(5);
  });
});
