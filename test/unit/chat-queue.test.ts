import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { createApp } from "../../src/gateway/app.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { eventually } from "../support/wait.js";

const configSchema = builtinConfigSchema();
const KEY = "agent:main:http:q";

function gateway(limits: Record<string, number>) {
  const model = new ControlledModel();
  const runtime = new Runtime({
    config: configSchema.parse({ gateway: { limits }, tools: { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } } }),
    agents: new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\ntools: []\n---\nHelp.").agent]]),
    models: single(model),
  });
  const app = createApp(runtime);
  const chat = (message: string, signal?: AbortSignal) =>
    app.request("/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message, session: "q" }),
      ...(signal ? { signal } : {}),
    });
  return { model, runtime, chat };
}

describe("turns waiting for their session on POST /v1/chat", () => {
  it("past gateway.limits.max_queued_turns a message is answered 429 too_many_queued_turns at once, naming the limit; those that wait still run", async () => {
    const { model, runtime, chat } = gateway({ max_queued_turns: 1 });
    const running = chat("first");
    await model.calls(1);
    const waiting = chat("second");
    await eventually(() => expect(runtime.stats().queuedTurns).toBe(1));
    const refused = await chat("third");
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("too_many_queued_turns");
    expect(body.error.message).toContain("gateway.limits.max_queued_turns");
    // A refused message never counts as waiting.
    expect(runtime.stats()).toMatchObject({ queuedTurns: 1 });
    model.pending[0]!.resolve({ text: "one" });
    (await model.calls(2))[1]!.resolve({ text: "two" });
    expect(((await (await running).json()) as { reply: string }).reply).toBe("one");
    expect(((await (await waiting).json()) as { reply: string }).reply).toBe("two");
    expect(model.pending).toHaveLength(2);
    // The refused message held nothing: no stop switch, no lock, once the others are done.
    await eventually(() => expect(runtime.stats()).toMatchObject({ runningTurns: 0, queuedTurns: 0, locks: 0, stopSwitches: 0 }));
    await runtime.close(0);
  });

  it("past gateway.limits.max_queued_bytes a big message is refused 429 naming the limit", async () => {
    const { model, runtime, chat } = gateway({ max_queued_bytes: 65_536 });
    const running = chat("first");
    await model.calls(1);
    const waiting = chat("x".repeat(40_000));
    await eventually(() => expect(runtime.stats().queuedTurns).toBe(1));
    const refused = await chat("y".repeat(40_000));
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("gateway.limits.max_queued_bytes (65536)");
    model.pending[0]!.resolve({ text: "one" });
    (await model.calls(2))[1]!.resolve({ text: "two" });
    await running;
    await waiting;
    await runtime.close(0);
  });

  it("a waiting turn whose client went away leaves the queue at once and never runs: the model never sees it, the history never holds it", async () => {
    const { model, runtime, chat } = gateway({ max_queued_turns: 1 });
    const running = chat("first");
    await model.calls(1);
    const client = new AbortController();
    const gone = chat("x".repeat(500_000), client.signal);
    await eventually(() => expect(runtime.stats().queuedTurns).toBe(1));
    client.abort();
    // Answered (to nobody) without waiting for the running turn: its place in the queue is free again.
    expect((await gone).status).toBe(503);
    expect(runtime.stats().queuedTurns).toBe(0);
    const next = chat("after");
    await eventually(() => expect(runtime.stats().queuedTurns).toBe(1));
    model.pending[0]!.resolve({ text: "one" });
    const calls = await model.calls(2);
    expect(ControlledModel.lastUser(calls[1]!)).toBe("after");
    calls[1]!.resolve({ text: "two" });
    await running;
    expect(((await (await next).json()) as { reply: string }).reply).toBe("two");
    expect(model.pending).toHaveLength(2);
    const users = (await runtime.historyOf(KEY)).filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["first", "after"]);
    await runtime.close(0);
  });
});
