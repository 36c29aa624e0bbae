// biome-ignore-all lint/suspicious/noExplicitAny: the routes' JSON, read as the tests check it
/**
 * Scheduled jobs through the real turn and routes, on a clock and timers
 * the test moves (no waiting): the `cron` tool adds a job (PicoClaw's
 * actions and texts), `GET /v1/cron` lists it, it runs at its time as a
 * turn in the session that made it, a one-shot is gone after its run, an
 * interval runs each time, a cron expression follows its time zone,
 * `DELETE` stops a job, another session cannot see or touch it. Across a
 * restart (the session folder's state): a missed run young enough runs once,
 * late, an older one is skipped, both said in the history; two schedulers
 * on one store never run one due time twice.
 */
import { describe, expect, it } from "vitest";
import { CronScheduler } from "../../src/features/cron/scheduler.js";
import type { Job } from "../../src/features/cron/jobs.js";
import { MemoryFeatureState, stateView } from "../../src/session/feature-state.js";
import { silentLogger } from "../../src/log.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf, tempDir } from "../support/project.js";
import { ManualClock, ManualTimers } from "../support/timers.js";
import { waitFor } from "../support/wait.js";

const T0 = Date.parse("2026-12-01T10:00:00Z");
const cron = (args: Record<string, unknown>) => `CALL cron ${JSON.stringify(args)}`;
const KEY = (session: string) => `agent:main:http:${session}`;

function gateway(opts: { dir?: string; clock?: ManualClock; cron?: Record<string, unknown> } = {}) {
  const clock = opts.clock ?? new ManualClock(T0);
  const timers = new ManualTimers();
  const h = harness({
    timer: timers.timer,
    clock,
    ...(opts.dir ? { dir: opts.dir } : {}),
    config: { tools: { ...DEFAULT_TOOLS_OFF, cron: { enabled: true } }, ...(opts.cron ? { cron: opts.cron } : {}) },
  });
  return { h, clock, timers };
}

/** The tool's result of one scripted call in `session`. */
async function tool(h: Harness, session: string, args: Record<string, unknown>): Promise<string> {
  const { json } = await h.chat({ message: cron(args), session });
  return String(json.reply).replace(/^Ran 1 tool call:\n1\. cron(?: \(error\))?: /, "");
}

const jobs = async (h: Harness): Promise<any[]> => (await jsonOf(await h.request("/v1/cron"))).jobs;

/** Moves the clock to `ms` and runs out the scheduler's timer, then waits until it has armed the next (or has none left to arm: no job is due any more). */
async function moveTo(h: Harness, clock: ManualClock, timers: ManualTimers, ms: number): Promise<void> {
  clock.advance(ms - clock.now());
  const before = timers.started.length;
  timers.fireAll();
  await waitFor(
    "the scheduler to arm its next timer, or have nothing left",
    async () => timers.started.length > before || (await jobs(h)).every((job) => job.next_run_at === null),
  );
}

const userTexts = async (h: Harness, session: string) =>
  (await h.runtime.historyOf(KEY(session))).filter((m) => m.role === "user").map((m) => String(m.content));

describe("the cron tool and the schedule", () => {
  it("a one-shot job runs at its time as a turn in its session, then is gone", async () => {
    const { h, clock, timers } = gateway();
    await h.runtime.start();
    const added = await tool(h, "alice", { action: "add", message: "Stand up and stretch.", at_seconds: 5 });
    expect(added).toMatch(/^Cron job added: Stand up and stretch\. \(id: [0-9a-f]{16}\)$/);
    const [job] = await jobs(h);
    expect(job).toMatchObject({
      name: "Stand up and stretch.",
      enabled: true,
      schedule: { kind: "at" },
      session_key: KEY("alice"),
      next_run_at: "2026-12-01T10:00:05.000Z",
    });
    await moveTo(h, clock, timers, T0 + 4_000);
    expect(await userTexts(h, "alice")).toHaveLength(1);
    await moveTo(h, clock, timers, T0 + 5_000);
    await waitFor("the run", async () => (await userTexts(h, "alice")).length === 2);
    expect((await userTexts(h, "alice"))[1]).toBe(
      `[Scheduled job "Stand up and stretch." (id ${job.id}), due 2026-12-01T10:00:05.000Z]\nStand up and stretch.`,
    );
    await waitFor("the one-shot to be gone", async () => (await jobs(h)).length === 0);
  });

  it("an interval runs each time; list shows it as PicoClaw does; DELETE /v1/cron/<id> stops it", async () => {
    const { h, clock, timers } = gateway();
    await h.runtime.start();
    await tool(h, "s", { action: "add", message: "ping", every_seconds: 60 });
    const [job] = await jobs(h);
    expect(await tool(h, "s", { action: "list" })).toBe(`Scheduled jobs:\n- ping (id: ${job.id}, every 60s)`);
    await moveTo(h, clock, timers, T0 + 60_000);
    // (A claim that lost to the run's own write arms again at once: such 0 ms timers are run out while waiting.)
    await waitFor("the first run", async () => {
      timers.fireAll(0);
      return (await userTexts(h, "s")).length === 3;
    });
    await moveTo(h, clock, timers, T0 + 120_000);
    await waitFor("the second run", async () => {
      timers.fireAll(0);
      return (await userTexts(h, "s")).length === 4;
    });
    const res = await h.request(`/v1/cron/${job.id}`, { method: "DELETE" });
    expect(await jsonOf(res)).toEqual({ removed: true, id: job.id });
    expect((await h.request(`/v1/cron/${job.id}`, { method: "DELETE" })).status).toBe(404);
    await moveTo(h, clock, timers, T0 + 180_000);
    expect(await userTexts(h, "s")).toHaveLength(4);
  });

  it("a cron expression follows its time zone; a bad one or an unknown zone is an error naming it", async () => {
    const { h } = gateway();
    await tool(h, "s", { action: "add", message: "morning news", cron_expr: "0 9 * * *", tz: "Europe/Berlin" });
    expect((await jobs(h))[0]).toMatchObject({ schedule: { kind: "cron", expr: "0 9 * * *", tz: "Europe/Berlin" }, next_run_at: "2026-12-02T08:00:00.000Z" });
    expect(await tool(h, "s", { action: "add", message: "x", cron_expr: "every day" })).toMatch(/^cron_expr: "every day" is not a 5-field cron expression/);
    expect(await tool(h, "s", { action: "add", message: "x", cron_expr: "0 9 * * *", tz: "Mars/Base" })).toMatch(/^tz: "Mars\/Base" is not a time zone/);
    expect(await tool(h, "s", { action: "add", message: "x" })).toBe("one of at_seconds, every_seconds, or cron_expr is required");
    expect(await tool(h, "s", { action: "add", message: "x", every_seconds: 5 })).toBe("every_seconds must be at least 60");
    expect(await tool(h, "s", { action: "add", message: "x", command: "rm -rf /", at_seconds: 5 })).toMatch(/^command jobs are not available here/);
    expect(await jobs(h)).toHaveLength(1);
  });

  it("a 0 or negative at_seconds or every_seconds is PicoClaw's missing-schedule error saying why; POST /v1/cron also refuses one past ten years and a number beyond a double", async () => {
    const { h } = gateway();
    expect(await tool(h, "s", { action: "add", message: "x", at_seconds: -5 })).toBe(
      "one of at_seconds, every_seconds, or cron_expr is required (at_seconds -5: seconds must be more than 0)",
    );
    expect(await tool(h, "s", { action: "add", message: "x", at_seconds: 0, every_seconds: -60 })).toBe(
      "one of at_seconds, every_seconds, or cron_expr is required (at_seconds 0 and every_seconds -60: seconds must be more than 0)",
    );
    const add = async (body: string) => {
      const res = await h.request("/v1/cron", { method: "POST", headers: { "content-type": "application/json" }, body });
      return { status: res.status, message: (await jsonOf(res)).error?.message };
    };
    const base = '"session_key":"agent:main:http:s","message":"x"';
    expect(await add(`{${base},"at_seconds":-5}`)).toEqual({
      status: 400,
      message: "one of at_seconds, every_seconds, or cron_expr is required (at_seconds -5: seconds must be more than 0)",
    });
    expect(await add(`{${base},"at_seconds":1e400}`)).toEqual({
      status: 400,
      message: "at_seconds: expected a finite number, received Infinity (a number beyond a double's range)",
    });
    expect(await add(`{${base},"every_seconds":99999999999}`)).toEqual({ status: 400, message: "every_seconds: must be <= 315360000" });
    expect(await jobs(h)).toEqual([]);
  });

  it("a job is its session's: another session's list is empty, and its id is not found there", async () => {
    const { h } = gateway();
    await tool(h, "alice", { action: "add", message: "private reminder", at_seconds: 60 });
    const [job] = await jobs(h);
    expect(await tool(h, "bob", { action: "list" })).toBe("No scheduled jobs");
    for (const action of ["get", "remove", "disable", "enable"]) expect(await tool(h, "bob", { action, job_id: job.id })).toBe(`Job ${job.id} not found`);
    expect(await tool(h, "bob", { action: "update", job_id: job.id, message: "mine now" })).toBe(`Job ${job.id} not found`);
    expect(await jobs(h)).toHaveLength(1);
    expect(await tool(h, "alice", { action: "disable", job_id: job.id })).toBe("Cron job 'private reminder' disabled");
    expect(await tool(h, "alice", { action: "list" })).toBe("No scheduled jobs");
    expect(await tool(h, "alice", { action: "update", job_id: job.id, name: "renamed", at_seconds: 10, every_seconds: 60 })).toBe(
      "only one of at_seconds, every_seconds, or cron_expr can be set",
    );
    expect(await tool(h, "alice", { action: "update", job_id: job.id })).toBe("at least one update field is required");
    expect(await tool(h, "alice", { action: "update", job_id: job.id, name: "renamed" })).toMatch(/^Cron job updated:\n\{/);
    expect(await tool(h, "alice", { action: "remove", job_id: job.id })).toBe(`Cron job removed: ${job.id}`);
  });

  it("is bounded per session (cron.max_jobs_per_session) and per gateway (cron.max_jobs)", async () => {
    const { h } = gateway({ cron: { max_jobs_per_session: 2, max_jobs: 3 } });
    await tool(h, "a", { action: "add", message: "1", at_seconds: 60 });
    await tool(h, "a", { action: "add", message: "2", at_seconds: 60 });
    expect(await tool(h, "a", { action: "add", message: "3", at_seconds: 60 })).toMatch(
      /this conversation has 2 scheduled jobs, the most it may \(cron\.max_jobs_per_session\)/,
    );
    await tool(h, "b", { action: "add", message: "4", at_seconds: 60 });
    expect(await tool(h, "c", { action: "add", message: "5", at_seconds: 60 })).toMatch(
      /the gateway has 3 scheduled jobs, the most it keeps \(cron\.max_jobs\)/,
    );
  });

  it("a stateless OpenAI-compatible conversation cannot schedule: PicoClaw's no-session error", async () => {
    const { h } = gateway();
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: cron({ action: "add", message: "x", at_seconds: 5 }) }] }),
    });
    expect((await jsonOf(res)).choices[0].message.content).toMatch(
      /no session context \(channel\/chat_id not set\)\. Use this tool in an active conversation\./,
    );
    expect(await jobs(h)).toEqual([]);
  });
});

describe("runs missed while the gateway was down", () => {
  async function missed(downMs: number) {
    const dir = tempDir();
    const first = gateway({ dir });
    await first.h.runtime.start();
    await tool(first.h, "s", { action: "add", message: "water the plants", every_seconds: 3600 });
    await first.h.runtime.close(0);
    const clock = new ManualClock(T0 + 3_600_000 + downMs);
    const second = gateway({ dir, clock });
    await second.h.runtime.start();
    return second;
  }

  it("a run at most cron.catch_up_minutes old runs once at start, late, and the history says so", async () => {
    const { h } = await missed(10 * 60_000);
    await waitFor("the late run", async () => (await userTexts(h, "s")).length === 2);
    const history = await h.runtime.historyOf(KEY("s"));
    const record = history.find((m) => m.role === "system" && m.record);
    expect(record).toMatchObject({ record: { type: "cron", outcome: "late", due: "2026-12-01T11:00:00.000Z" } });
    expect((await userTexts(h, "s"))[1]).toMatch(/, run 10 min late \(the gateway was down\)\]\nwater the plants$/);
    expect((await jobs(h))[0].next_run_at).toBe("2026-12-01T12:00:00.000Z");
  });

  it("an older one is skipped, and the history says so", async () => {
    const { h } = await missed(90 * 60_000);
    await waitFor("the note", async () => (await h.runtime.historyOf(KEY("s"))).some((m) => m.role === "system" && m.record));
    const record = (await h.runtime.historyOf(KEY("s"))).find((m) => m.role === "system" && m.record)!;
    expect(record).toMatchObject({ record: { type: "cron", outcome: "skipped" } });
    expect(record.content).toMatch(/was missed while the gateway was down, 90 min ago \(more than cron\.catch_up_minutes\), and was skipped/);
    expect(await userTexts(h, "s")).toHaveLength(1);
    expect((await jobs(h))[0]).toMatchObject({ last_status: "skipped", next_run_at: "2026-12-01T13:00:00.000Z" });
  });
});

describe("one due time, run once", () => {
  it("two schedulers on one store, starting together, run a due job once", async () => {
    const store = new MemoryFeatureState();
    const state = stateView(store, "cron");
    const job: Job = {
      id: "0123456789abcdef",
      name: "once",
      enabled: true,
      schedule: { kind: "at", atMs: T0 },
      message: "once",
      agentId: "main",
      sessionKey: KEY("s"),
      nextRunAtMs: T0,
      createdAtMs: T0 - 1000,
      updatedAtMs: T0 - 1000,
      deleteAfterRun: true,
    };
    await state.put(job.id, job, 0);
    const runs: string[] = [];
    const timers = new ManualTimers();
    const work: Promise<unknown>[] = [];
    const scheduler = (name: string) =>
      new CronScheduler({
        state,
        timer: timers.timer,
        clock: { now: () => T0 + 1000 },
        logger: silentLogger,
        track: (p) => work.push(p),
        catchUpMs: 3_600_000,
        run: async () => {
          runs.push(name);
        },
        note: async () => {},
      });
    await Promise.all([scheduler("a").start(), scheduler("b").start()]);
    await Promise.all(work);
    await Promise.all(work);
    expect(runs).toHaveLength(1);
    expect(await state.list()).toEqual([]);
  });
});
