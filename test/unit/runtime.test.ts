import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { AbortedError, ModelError } from "../../src/errors.js";
import type { RuntimeEvents } from "../../src/port/events.js";
import { STOPPED_REPLY } from "../../src/runtime/options.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { testTools } from "../support/tools.js";
import { within } from "../support/wait.js";

const configSchema = builtinConfigSchema();

const NO_SUBAGENTS = { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } };

function makeRuntime(model: ControlledModel, config: Record<string, unknown> = { tools: NO_SUBAGENTS }) {
  const agents = new Map([
    ["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nSystem prompt.").agent],
    ["quiet", readAgent("quiet", "agents/quiet/AGENT.md", "---\ntools: []\n---\n").agent],
  ]);
  let clock = 0;
  let id = 0;
  return new Runtime({
    config: configSchema.parse(config),
    agents,
    models: single(model),
    tools: testTools,
    clock: { now: () => (clock += 5) },
    ids: () => `id${++id}`,
  });
}

/**
 * Lets everything that can happen now happen: the turns here run on promises
 * only (in-memory model, history and locks), so a few turns of the event loop
 * drain them, however fast or slow the machine.
 */
async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const send = (runtime: Runtime, text: string, chatId = "s", signal?: AbortSignal) =>
  runtime.handleMessage({ agentId: "main", channel: "http", chatId, text, ...(signal ? { signal } : {}) });

describe("turn loop", () => {
  it("sends system prompt, history and the new message; tools sorted; keeps the exchange", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const first = send(runtime, "hi");
    (await model.calls(1))[0]!.resolve({ text: "hello" });
    expect((await first).reply).toBe("hello");
    const second = send(runtime, "again");
    const [, call] = await model.calls(2);
    expect(call!.request.messages).toEqual([
      { role: "system", content: "System prompt." },
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "again" },
    ]);
    expect(call!.request.tools.map((t) => t.name)).toEqual(["boom", "echo", "wait", "whisper"]);
    call!.resolve({ text: "ok" });
    await second;
  });

  it("an agent without a prompt sends no system message; without tools sends none", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const turn = runtime.handleMessage({ agentId: "quiet", channel: "http", chatId: "s", text: "x" });
    const [call] = await model.calls(1);
    expect(call!.request.messages).toEqual([{ role: "user", content: "x" }]);
    expect(call!.request.tools).toEqual([]);
    call!.resolve({ text: "y" });
    await turn;
  });

  it("a failed model call leaves the history exactly as it was", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const ok = send(runtime, "one");
    (await model.calls(1))[0]!.resolve({ text: "1" });
    await ok;
    const failing = send(runtime, "two");
    const [, call] = await model.calls(2);
    call!.resolve({ toolCalls: [{ id: "c", type: "function", function: { name: "echo", arguments: '{"text":"x"}' } }] });
    const [, , again] = await model.calls(3);
    again!.reject(new ModelError("server", "controlled", "HTTP 500"));
    await expect(failing).rejects.toThrow('model "controlled": HTTP 500');
    expect(await runtime.historyOf("agent:main:http:s")).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
    ]);
  });

  it("emits turn, llm and tool events with agent id, session key and turn id (a tool's and its delivery's with the call id), the turn's usage summed at its end", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const seen: [string, unknown][] = [];
    for (const name of ["turn.start", "turn.end", "llm.request", "llm.response", "tool.start", "tool.end", "delivery"] as const) {
      runtime.on(name, (p: RuntimeEvents[typeof name]) => seen.push([name, p]));
    }
    const turn = send(runtime, "go");
    (await model.calls(1))[0]!.resolve({ toolCalls: [{ id: "c1", type: "function", function: { name: "echo", arguments: '{"text":"x"}' } }] });
    (await model.calls(2))[1]!.resolve({ text: "done", usage: { inputTokens: 3, outputTokens: 4 } });
    await turn;
    const scope = { agentId: "main", sessionKey: "agent:main:http:s" };
    expect(seen).toEqual([
      ["turn.start", { ...scope, turnId: "id1", text: "go" }],
      ["llm.request", { ...scope, turnId: "id1", model: "controlled", iteration: 1, messages: 2, tools: 4 }],
      ["llm.response", { ...scope, turnId: "id1", model: "controlled", iteration: 1, toolCalls: 1, durationMs: 5 }],
      ["tool.start", { ...scope, turnId: "id1", tool: "echo", callId: "c1" }],
      ["tool.end", { ...scope, turnId: "id1", tool: "echo", callId: "c1", isError: false, silent: false, durationMs: 5, text: "echo: x" }],
      ["delivery", { ...scope, from: "echo", text: "echo: x", turnId: "id1", callId: "c1" }],
      ["llm.request", { ...scope, turnId: "id1", model: "controlled", iteration: 2, messages: 4, tools: 4 }],
      ["llm.response", { ...scope, turnId: "id1", model: "controlled", iteration: 2, toolCalls: 0, durationMs: 5, usage: { inputTokens: 3, outputTokens: 4 } }],
      ["delivery", { ...scope, from: "agent", text: "done", turnId: "id1" }],
      ["turn.end", { ...scope, turnId: "id1", outcome: "done", durationMs: 35, usage: { inputTokens: 3, outputTokens: 4 } }],
    ]);
  });

  it("a listener that throws does not break the turn", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    runtime.on("turn.start", () => {
      throw new Error("bad listener");
    });
    const turn = send(runtime, "x");
    (await model.calls(1))[0]!.resolve({ text: "fine" });
    expect((await turn).reply).toBe("fine");
  });
});

describe("sessions", () => {
  it("a chat id or channel a session key cannot be built from is refused", async () => {
    const runtime = makeRuntime(new ControlledModel());
    await expect(send(runtime, "x", "a:subagent:b")).rejects.toMatchObject({ code: "invalid_request", fault: "user" });
    await expect(runtime.handleMessage({ agentId: "main", channel: "Bad Channel", chatId: "s", text: "x" })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("turns on one session run one at a time, in arrival order", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const a = send(runtime, "first");
    const b = send(runtime, "second");
    const c = send(runtime, "third");
    await model.calls(1);
    await settled();
    expect(model.pending).toHaveLength(1);
    model.pending[0]!.resolve({ text: "1" });
    await model.calls(2);
    expect(ControlledModel.lastUser(model.pending[1]!)).toBe("second");
    expect(model.pending[1]!.request.messages.map((m) => m.content)).toEqual(["System prompt.", "first", "1", "second"]);
    model.pending[1]!.resolve({ text: "2" });
    (await model.calls(3))[2]!.resolve({ text: "3" });
    expect((await Promise.all([a, b, c])).map((o) => o.reply)).toEqual(["1", "2", "3"]);
  });

  it("different sessions run in parallel, and idle sessions keep no lock", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const turns = ["a", "b", "c"].map((chat) => send(runtime, `to ${chat}`, chat));
    const calls = await model.calls(3);
    expect(calls.map(ControlledModel.lastUser).sort()).toEqual(["to a", "to b", "to c"]);
    for (const call of calls) call.resolve({ text: "ok" });
    await Promise.all(turns);
    expect((runtime as unknown as { locks: { size: number } }).locks.size).toBe(0);
  });

  it("a client abort reaches the provider call and leaves history unchanged", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const controller = new AbortController();
    const turn = send(runtime, "slow", "s", controller.signal);
    await model.calls(1);
    controller.abort(new AbortedError("client went away"));
    await expect(turn).rejects.toThrow("client went away");
    expect(await runtime.historyOf("agent:main:http:s")).toEqual([]);
  });

  it("a turn /stop ended resolves, saying so; the same turn ended by its client leaving rejects", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const stopped = send(runtime, "slow", "s");
    await model.calls(1);
    expect((await send(runtime, "/stop", "s")).reply).toBe("Stopped.");
    expect(await stopped).toMatchObject({ stopped: true, reply: STOPPED_REPLY, delivered: [{ from: "command", text: STOPPED_REPLY }] });
    const client = new AbortController();
    const left = send(runtime, "slow", "s", client.signal);
    await model.calls(2);
    client.abort(new AbortedError("client went away"));
    await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "/stop" });
    await expect(left).rejects.toThrow("client went away");
    expect(await runtime.historyOf("agent:main:http:s")).toEqual([]);
  });

  it("a client abort reaches a running tool", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const controller = new AbortController();
    let ended: RuntimeEvents["turn.end"] | undefined;
    runtime.on("turn.end", (e) => (ended = e));
    const toolStarted = new Promise<void>((resolve) => runtime.on("tool.start", () => resolve()));
    const turn = send(runtime, "x", "s", controller.signal);
    (await model.calls(1))[0]!.resolve({ toolCalls: [{ id: "w", type: "function", function: { name: "wait", arguments: "{}" } }] });
    await within("the wait tool to start", toolStarted);
    controller.abort(new AbortedError("stop"));
    await expect(turn).rejects.toThrow("stop");
    expect(ended?.outcome).toBe("aborted");
  });

  it("a queued turn whose client left is skipped", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const first = send(runtime, "first");
    const controller = new AbortController();
    const second = send(runtime, "second", "s", controller.signal);
    await model.calls(1);
    controller.abort(new AbortedError("gone"));
    model.pending[0]!.resolve({ text: "1" });
    await first;
    await expect(second).rejects.toThrow("gone");
    expect(model.pending).toHaveLength(1);
  });

  it("messages leave no listener behind on long-lived signals (no growth per message)", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const client = new AbortController();
    for (let i = 0; i < 50; i++) {
      const turn = send(runtime, `m${i}`, "s", client.signal);
      (await model.calls(i + 1))[i]!.resolve({ text: "ok" });
      await turn;
      await send(runtime, "/help", "s", client.signal);
    }
    expect(getEventListeners(runtime.shutdownSignal, "abort")).toHaveLength(0);
    expect(getEventListeners(client.signal, "abort")).toHaveLength(0);
  });

  it("close lets running turns finish within the grace period, then aborts the rest", async () => {
    const model = new ControlledModel();
    const runtime = makeRuntime(model);
    const finishing = send(runtime, "quick", "a");
    const hanging = send(runtime, "hang", "b");
    await model.calls(2);
    const closed = runtime.close(50);
    model.pending.find((c) => ControlledModel.lastUser(c) === "quick")!.resolve({ text: "made it" });
    expect((await finishing).reply).toBe("made it");
    await closed;
    await expect(hanging).rejects.toThrow("shutting down");
    await expect(send(runtime, "late")).rejects.toMatchObject({ code: "aborted", fault: "system" });
  });
});
