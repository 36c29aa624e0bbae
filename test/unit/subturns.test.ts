import { sectionAt } from "../support/project.js";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { AbortedError } from "../../src/errors.js";
import { EventBus, type RuntimeEvents } from "../../src/port/events.js";
import { MemoryHistoryStore } from "../../src/session/memory-history.js";
import { Outbox } from "../../src/session/outbox.js";
import { childSessionKey, depth, isSubagentKey, isWithin, parentKey, parseSessionKey, rootKey, sessionKeyFor } from "../../src/session/key.js";
import { SessionLifecycle, SessionState } from "../../src/session/state.js";
import { StopSwitches } from "../../src/session/stop-switches.js";
import { CLEARED, SpawnedChildren } from "../../src/features/subagents/spawned.js";
import { Subturns } from "../../src/features/subagents/subturns.js";
import { silentLogger } from "../../src/log.js";
import { realTimer } from "../../src/signals.js";

const configSchema = builtinConfigSchema();

describe("session key helpers", () => {
  const root = sessionKeyFor("main", "http", "s1");
  const child = childSessionKey(root, "abc");
  const grandchild = childSessionKey(child, "x_Y-9");

  it("build and parse keys", () => {
    expect(root).toBe("agent:main:http:s1");
    expect(grandchild).toBe("agent:main:http:s1:subagent:abc:subagent:x_Y-9");
    expect(parseSessionKey(grandchild)).toEqual({ agentId: "main", channel: "http", chatId: "s1", subagents: ["abc", "x_Y-9"] });
  });

  it("know subagent keys, their depth, parent and root", () => {
    expect([root, child, grandchild].map(isSubagentKey)).toEqual([false, true, true]);
    expect([root, child, grandchild].map(depth)).toEqual([0, 1, 2]);
    expect([root, child, grandchild].map(parentKey)).toEqual([null, root, child]);
    expect([root, child, grandchild].map(rootKey)).toEqual([root, root, root]);
    expect(isWithin(grandchild, root)).toBe(true);
    expect(isWithin(root, root)).toBe(true);
    expect(isWithin("agent:main:http:s10", root)).toBe(false);
  });

  it.each([
    "main:http:s",
    "agent:Main:http:s",
    "agent:main:http",
    "agent:main:http:s:subagent",
    "agent:main:http:s:child:abc",
    "agent:main:http:s:subagent:a b",
    "agent:main:HTTP:s",
    "agent:main:http:",
  ])("%j is not a session key", (key) => {
    expect(parseSessionKey(key)).toBeNull();
    expect(isSubagentKey(key)).toBe(false);
  });
});

function setup(subturn: Record<string, number> = {}, tools: Record<string, unknown> = {}) {
  const config = configSchema.parse({ agents: { defaults: { subturn } }, tools });
  const events = new EventBus();
  const lifecycle = new SessionLifecycle();
  const state = new SessionState<string>();
  lifecycle.register(state);
  const history = new MemoryHistoryStore();
  const ends: RuntimeEvents["subagent.end"][] = [];
  const starts: RuntimeEvents["subagent.start"][] = [];
  events.on("subagent.end", (e) => ends.push(e));
  events.on("subagent.start", (e) => starts.push(e));
  let id = 0;
  let now = 0;
  let behaviour: (key: string, signal: AbortSignal) => Promise<string> = async () => "ok";
  const outbox = new Outbox();
  const subturns = new Subturns(
    {
      events,
      history,
      notify: (sessionKey, event, data) => outbox.publish(sessionKey, { type: "notice", event, data }),
      releaseSession: (sessionKey) => lifecycle.clear(sessionKey, "release"),
      logger: silentLogger,
      clock: { now: () => (now += 10) },
      // setTimeout underneath, so vitest's fake timers (where a test uses them) decide when a child times out.
      timer: realTimer,
      ids: () => `c${++id}`,
      runTurn: async (_agent, key, text, signal) => {
        state.set("main", key, "child state");
        await history.append(key, [{ role: "user", content: text }]);
        return behaviour(key, signal);
      },
    },
    { limits: sectionAt(config, "agents.defaults.subturn"), keepHistory: sectionAt(config, "tools.subagent").keep_history },
  );
  const agent = readAgent("main", "agents/main/AGENT.md", "p").agent;
  const request = (signal = new AbortController().signal, parent = "agent:main:http:s") => ({
    parentKey: parent,
    parentCall: { turnId: "t1", callId: "call-1" },
    parentAgent: agent,
    agent,
    task: "do it",
    label: "job",
    signal,
  });
  return { subturns, state, history, ends, starts, events, lifecycle, request, behave: (fn: typeof behaviour) => (behaviour = fn) };
}

/** Vitest's fake timers for this test only: time moves when the test advances it. */
function useFakeTimers(): void {
  vi.useFakeTimers();
  onTestFinished(() => void vi.useRealTimers());
}

/** A place that was given (not an error text). */
function placed(slot: (() => void) | string): () => void {
  if (typeof slot === "string") throw new Error(`no place: ${slot}`);
  return slot;
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<string>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

describe("a child's end", () => {
  it("done: one start, exactly one end, its state and history released", async () => {
    const { subturns, state, history, ends, starts, request } = setup();
    const result = await subturns.start(request()).done;
    expect(result).toEqual({
      id: "c1",
      childKey: "agent:main:http:s:subagent:c1",
      agentId: "main",
      label: "job",
      outcome: "done",
      reply: "ok",
      durationMs: 20,
    });
    const parentCall = { turnId: "t1", callId: "call-1" };
    expect(starts).toEqual([
      { agentId: "main", sessionKey: result.childKey, ...parentCall, parentKey: "agent:main:http:s", childKey: result.childKey, label: "job" },
    ]);
    expect(ends).toEqual([
      {
        agentId: "main",
        sessionKey: result.childKey,
        ...parentCall,
        parentKey: "agent:main:http:s",
        childKey: result.childKey,
        label: "job",
        outcome: "done",
        durationMs: 10,
      },
    ]);
    expect(state.size).toBe(0);
    expect(await history.get(result.childKey)).toEqual([]);
    expect(subturns.runningCount).toBe(0);
  });

  it("error: the child's failure is its outcome, not a throw", async () => {
    const { subturns, ends, state, behave, request } = setup();
    behave(async () => {
      throw new Error("model exploded");
    });
    const result = await subturns.start(request()).done;
    expect(result).toMatchObject({ outcome: "error", error: "model exploded" });
    expect(ends.map((e) => e.outcome)).toEqual(["error"]);
    expect(state.size).toBe(0);
  });

  it("aborted: the parent's signal stops the child", async () => {
    const { subturns, ends, state, behave, request } = setup();
    behave((_key, signal) => untilAborted(signal));
    const parent = new AbortController();
    const running = subturns.start(request(parent.signal)).done;
    parent.abort(new AbortedError("parent stopped"));
    expect(await running).toMatchObject({ outcome: "aborted", error: "parent stopped" });
    expect(ends.map((e) => e.outcome)).toEqual(["aborted"]);
    expect(state.size).toBe(0);
  });

  it("timeout: a child over timeout_ms is aborted with outcome timeout", async () => {
    useFakeTimers();
    const { subturns, ends, state, behave, request } = setup({ timeout_ms: 20 });
    let sawAbort = false;
    behave((_key, signal) => {
      signal.addEventListener("abort", () => (sawAbort = true));
      return untilAborted(signal);
    });
    const done = subturns.start(request()).done;
    await vi.advanceTimersByTimeAsync(19);
    expect(sawAbort).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const result = await done;
    expect(result).toMatchObject({ outcome: "timeout", error: "timed out after 20 ms (agents.defaults.subturn.timeout_ms)" });
    expect(sawAbort).toBe(true);
    expect(ends.map((e) => e.outcome)).toEqual(["timeout"]);
    expect(state.size).toBe(0);
  });

  it("keep_history keeps the history but still releases per-session state", async () => {
    const { subturns, history, state, request } = setup({}, { subagent: { keep_history: true } });
    const result = await subturns.start(request()).done;
    expect(await history.get(result.childKey)).toHaveLength(1);
    expect(state.size).toBe(0);
  });
});

describe("limits", () => {
  it("depth: a child deeper than max_depth is refused", () => {
    const { subturns } = setup({ max_depth: 2 });
    const root = "agent:main:http:s";
    expect(subturns.refusal(root, "t")).toBeNull();
    expect(subturns.refusal(childSessionKey(root, "a"), "t")).toBeNull();
    expect(subturns.refusal(childSessionKey(childSessionKey(root, "a"), "b"), "t")).toMatch(/nest at most 2 deep/);
  });

  it("task size and emptiness", () => {
    const { subturns } = setup();
    expect(subturns.refusal("agent:main:http:s", "  ")).toBe("the task is empty");
    expect(subturns.refusal("agent:main:http:s", "x".repeat(64 * 1024 + 1))).toMatch(/longer than 65536 bytes/);
  });

  it("max_concurrent per parent: a new child waits for a place, at most concurrency_timeout_ms", async () => {
    useFakeTimers();
    const { subturns } = setup({ max_concurrent: 2, concurrency_timeout_ms: 30 });
    const signal = new AbortController().signal;
    const a = placed(await subturns.slot("p", signal));
    const b = placed(await subturns.slot("p", signal));
    let third: unknown = "still waiting";
    void subturns.slot("p", signal).then((slot) => (third = slot));
    await vi.advanceTimersByTimeAsync(29);
    expect(third).toBe("still waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(third).toBe(
      "too many subagents are running for this conversation (agents.defaults.subturn.max_concurrent = 2) and none finished within 30 ms; wait for them or do this yourself",
    );
    placed(await subturns.slot("other-parent", signal))();
    const waiting = subturns.slot("p", signal);
    a();
    const c = placed(await waiting);
    b();
    c();
    expect(subturns.places.parentCount).toBe(0);
    expect(subturns.places.running).toBe(0);
  });

  it("waiting for a place ends when the parent is aborted", async () => {
    const { subturns } = setup({ max_concurrent: 1, concurrency_timeout_ms: 60_000 });
    const taken = placed(await subturns.slot("p", new AbortController().signal));
    const parent = new AbortController();
    const waiting = subturns.slot("p", parent.signal);
    parent.abort(new AbortedError("gone"));
    await expect(waiting).rejects.toThrow("gone");
    taken();
    placed(await subturns.slot("p", new AbortController().signal))();
    expect(subturns.places.running).toBe(0);
  });

  it("as seen in events, never more than max_concurrent children run at once", async () => {
    const { subturns, events, lifecycle, request } = setup({ max_concurrent: 2, concurrency_timeout_ms: 60_000 });
    lifecycle.register({ clearSession: () => new Promise<void>((r) => setTimeout(r, 5)) }); // a store that takes a while to release
    let running = 0;
    let peak = 0;
    events.on("subagent.start", () => (peak = Math.max(peak, ++running)));
    events.on("subagent.end", () => running--);
    const run = async () => {
      const release = placed(await subturns.slot("agent:main:http:s", new AbortController().signal));
      return (await subturns.start(request(), release).done).outcome;
    };
    expect(await Promise.all(Array.from({ length: 6 }, run))).toEqual(Array(6).fill("done"));
    expect(peak).toBe(2);
  });

  it("children hold their place while running and give it back however they end", async () => {
    const { subturns, behave, request } = setup({ max_concurrent: 1, concurrency_timeout_ms: 0 });
    behave(async () => {
      throw new Error("fail");
    });
    for (let i = 0; i < 3; i++) {
      const release = placed(await subturns.slot("agent:main:http:s", new AbortController().signal));
      await subturns.start(request(), release).done;
    }
  });

  it("max_running across the gateway: a child of a user's turn waits for a place, at most concurrency_timeout_ms in all", async () => {
    useFakeTimers();
    const { subturns } = setup({ max_running: 2, concurrency_timeout_ms: 30 });
    const signal = new AbortController().signal;
    const a = placed(await subturns.slot("agent:main:http:a", signal));
    placed(await subturns.slot("agent:main:http:b", signal));
    let third: unknown = "still waiting";
    void subturns.slot("agent:main:http:c", signal).then((slot) => (third = slot));
    await vi.advanceTimersByTimeAsync(29);
    expect(third).toBe("still waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(third).toBe(
      "too many subagents are running in the gateway (agents.defaults.subturn.max_running = 2) and none finished within 30 ms; try again later or do this yourself",
    );
    const waiting = subturns.slot("agent:main:http:c", signal);
    await vi.advanceTimersByTimeAsync(10);
    a();
    placed(await waiting);
    expect(subturns.places.running).toBe(2);
  });

  it("max_running: a child of a subagent gets the error at once instead of waiting for a place another subagent holds", async () => {
    useFakeTimers();
    const { subturns } = setup({ max_running: 2, concurrency_timeout_ms: 60_000 });
    const signal = new AbortController().signal;
    const child = childSessionKey("agent:main:http:s", "c1");
    placed(await subturns.slot("agent:main:http:s", signal));
    const grandchild = placed(await subturns.slot(child, signal));
    expect(await subturns.slot(child, signal)).toBe(
      "too many subagents are running in the gateway (agents.defaults.subturn.max_running = 2); do this work yourself",
    );
    expect(subturns.places.parentCount).toBe(2);
    grandchild();
    placed(await subturns.slot(child, signal));
  });
});

describe("stop switches", () => {
  it("stop aborts every holder of the session's switch; later holders get a fresh one", async () => {
    const switches = new StopSwitches();
    const a = switches.hold("s");
    const b = switches.hold("s");
    const other = switches.hold("t");
    expect(await switches.stop("s")).toBe(true);
    expect(a.signal.aborted && b.signal.aborted).toBe(true);
    expect(other.signal.aborted).toBe(false);
    const fresh = switches.hold("s");
    expect(fresh.signal.aborted).toBe(false);
    a.release();
    b.release();
    fresh.release();
    other.release();
    expect(switches.size).toBe(0);
    expect(await switches.stop("s")).toBe(false);
  });
});

describe("spawned children and /clear", () => {
  it("a clear stops the session's children, waits until they end, and voids a result that comes in after it", async () => {
    const spawned = new SpawnedChildren();
    const mine = spawned.add("agent:main:http:s");
    const other = spawned.add("agent:main:http:t");
    let finish!: (result: string) => void;
    const done = new Promise<string>((resolve) => (finish = resolve));
    const answered: string[] = [];
    const settled = mine.settle(done, (result) => answered.push(result));
    const otherSettled = other.settle(Promise.resolve("other's result"), (result) => answered.push(result));
    let cleared = false;
    const clearing = spawned.clearSession("agent:main:http:s", "clear").then(() => (cleared = true));
    expect(mine.signal.aborted).toBe(true);
    expect((mine.signal.reason as Error).message).toBe(CLEARED);
    expect(other.signal.aborted).toBe(false);
    await otherSettled;
    expect(cleared).toBe(false);
    finish("a late result");
    await clearing;
    await settled;
    expect(answered).toEqual(["other's result"]);
    expect(spawned.size).toBe(0);
  });

  it("the end of a sub-turn (release) and a clear of another session leave children alone", async () => {
    const spawned = new SpawnedChildren();
    const child = spawned.add("agent:main:http:s");
    await spawned.clearSession("agent:main:http:s", "release");
    await spawned.clearSession("agent:main:http:s2", "clear");
    expect(child.signal.aborted).toBe(false);
    const answered: string[] = [];
    await child.settle(Promise.resolve("result"), (result) => answered.push(result));
    expect(answered).toEqual(["result"]);
  });
});
