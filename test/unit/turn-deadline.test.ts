import { describe, expect, it, onTestFinished } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { TurnTimeoutError } from "../../src/errors.js";
import type { RuntimeEvents } from "../../src/port/events.js";
import { createApp } from "../../src/gateway/app.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { ManualTimers } from "../support/timers.js";
import { testTools } from "../support/tools.js";
import { within } from "../support/wait.js";

const configSchema = builtinConfigSchema();

/**
 * agents.defaults.turn_timeout_ms: a turn (its model calls and tools
 * together) that runs past it is aborted like any aborted turn, with its own
 * error, `turn_timeout`, which the gateway answers 504. The test decides when
 * the time is up.
 */

const KEY = "agent:main:http:s";

function makeRuntime(turnTimeoutMs = 1000) {
  const model = new ControlledModel();
  const timers = new ManualTimers();
  const agents = new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nPrompt.").agent]]);
  const runtime = new Runtime({
    config: configSchema.parse({
      agents: { defaults: { turn_timeout_ms: turnTimeoutMs } },
      tools: { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } },
    }),
    agents,
    models: single(model),
    tools: testTools,
    turnTimer: timers.timer,
  });
  onTestFinished(() => runtime.close(0));
  return { model, timers, runtime };
}

const send = (runtime: Runtime, text: string) => runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text });

describe("a turn's deadline", () => {
  it("is turn_timeout_ms (default 15 minutes)", () => {
    expect(configSchema.parse({}).agents.defaults.turn_timeout_ms).toBe(900_000);
  });

  it("past it, the model call is cancelled, the turn fails with turn_timeout and the history is unchanged", async () => {
    const { model, timers, runtime } = makeRuntime(1000);
    const first = send(runtime, "one");
    (await model.calls(1))[0]!.resolve({ text: "1" });
    await first;
    expect(timers.pending()).toEqual([]);

    const slow = send(runtime, "two");
    const [, call] = await model.calls(2);
    expect(timers.pending().map((t) => t.ms)).toEqual([1000]);
    timers.fireAll();
    const error = await slow.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TurnTimeoutError);
    expect(error).toMatchObject({ code: "turn_timeout", fault: "system" });
    expect((error as Error).message).toBe(
      "the turn took longer than 1000 ms (agents.defaults.turn_timeout_ms) and was stopped; nothing of it was kept. Ask for less at once, or raise turn_timeout_ms",
    );
    expect(call!.request.signal.aborted).toBe(true);
    expect(await runtime.historyOf(KEY)).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
    ]);
  });

  it("covers the tools too: a running tool is aborted, and turn.end says the turn failed and why", async () => {
    const { model, timers, runtime } = makeRuntime();
    const ends: RuntimeEvents["turn.end"][] = [];
    runtime.on("turn.end", (e) => ends.push(e));
    const toolStarted = new Promise<void>((resolve) => runtime.on("tool.start", () => resolve()));
    const turn = send(runtime, "wait for it");
    (await model.calls(1))[0]!.resolve({ toolCalls: [{ id: "w", type: "function", function: { name: "wait", arguments: "{}" } }] });
    await within("the wait tool to start", toolStarted);
    timers.fireAll();
    await expect(turn).rejects.toMatchObject({ code: "turn_timeout" });
    expect(ends).toEqual([expect.objectContaining({ outcome: "error", error: expect.stringContaining("(agents.defaults.turn_timeout_ms)") })]);
    expect(await runtime.historyOf(KEY)).toEqual([]);
  });

  it("the session goes on: the next turn runs with a deadline of its own", async () => {
    const { model, timers, runtime } = makeRuntime();
    const late = send(runtime, "late");
    await model.calls(1);
    timers.fireAll();
    await expect(late).rejects.toMatchObject({ code: "turn_timeout" });
    const next = send(runtime, "again");
    (await model.calls(2))[1]!.resolve({ text: "fine" });
    expect((await next).reply).toBe("fine");
    expect(timers.started).toHaveLength(2);
    expect(timers.pending()).toEqual([]);
  });

  it("the gateway answers 504 turn_timeout, not the 503 of /stop", async () => {
    const { model, timers, runtime } = makeRuntime();
    const app = createApp(runtime);
    const answer = app.request("/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "x", session: "s" }),
    });
    await model.calls(1);
    timers.fireAll();
    const res = await answer;
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      error: {
        code: "turn_timeout",
        message:
          "the turn took longer than 1000 ms (agents.defaults.turn_timeout_ms) and was stopped; nothing of it was kept. Ask for less at once, or raise turn_timeout_ms",
      },
    });
  });
});
