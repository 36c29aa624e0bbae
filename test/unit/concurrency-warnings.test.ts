import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { waitFor } from "../support/wait.js";

const configSchema = builtinConfigSchema();

/**
 * The JSON log is the gateway's stderr: a Node warning printed there breaks
 * it. Many turns or tool calls at once hold listeners on the same signals
 * (shutdown, a session's stop switch, a turn's signal); none of that may
 * make Node warn, however many there are.
 */

const MANY = 50;

/** Every warning the process emits while the test runs. */
function warningsDuringTest(): Error[] {
  const seen: Error[] = [];
  const listener = (warning: Error) => seen.push(warning);
  process.on("warning", listener);
  onTestFinished(() => void process.off("warning", listener));
  return seen;
}

/** Node emits warnings on a later tick: let those ticks pass. */
async function ticks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A tool whose calls all wait for one gate, so they are in flight together. */
function gatedTool() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let running = 0;
  const tool = defineTool({
    name: "gate",
    description: "Waits for the gate.",
    parameters: z.object({}),
    enabledByDefault: true,
    execute: async () => {
      running++;
      await opened;
      return toolResult.text("through");
    },
  });
  return { tool, open, running: () => running };
}

function makeRuntime(model: ControlledModel, tool: ReturnType<typeof gatedTool>["tool"]) {
  const agents = new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nPrompt.").agent]]);
  const runtime = new Runtime({
    // Every one of MANY turns on one session may wait (gateway.limits.max_queued_turns is 32 by default).
    config: configSchema.parse({
      gateway: { limits: { max_queued_turns: MANY } },
      tools: { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } },
    }),
    agents,
    models: single(model),
    tools: [tool],
  });
  onTestFinished(() => runtime.close(0));
  return runtime;
}

const send = (runtime: Runtime, chatId: string, signal?: AbortSignal) =>
  runtime.handleMessage({ agentId: "main", channel: "http", chatId, text: "go", ...(signal ? { signal } : {}) });

describe("no Node warning at any concurrency", () => {
  it(`${MANY} tool calls of one turn in flight at once make no warning`, async () => {
    const warnings = warningsDuringTest();
    const model = new ControlledModel();
    const gate = gatedTool();
    const runtime = makeRuntime(model, gate.tool);
    const turn = send(runtime, "s");
    const calls = Array.from({ length: MANY }, (_, i) => ({ id: `c${i}`, type: "function" as const, function: { name: "gate", arguments: "{}" } }));
    (await model.calls(1))[0]!.resolve({ toolCalls: calls });
    await waitFor(`all ${MANY} gate calls to be running`, () => gate.running() === MANY, { instead: () => `${gate.running()} were` });
    gate.open();
    (await model.calls(2))[1]!.resolve({ text: "all through" });
    expect((await turn).reply).toBe("all through");
    await ticks();
    expect(warnings).toEqual([]);
  });

  it(`${MANY} turns at once, on one session and on as many sessions, with one client signal, make no warning`, async () => {
    const warnings = warningsDuringTest();
    const model = new ControlledModel();
    const runtime = makeRuntime(model, gatedTool().tool);
    const client = new AbortController();
    const queued = Array.from({ length: MANY }, () => send(runtime, "one", client.signal));
    const parallel = Array.from({ length: MANY }, (_, i) => send(runtime, `s${i}`, client.signal));
    // Every session but "one" runs now; "one" runs its turns one after the other.
    for (let answered = 0; answered < 2 * MANY; answered++) {
      const pending = await model.calls(answered + 1);
      pending[answered]!.resolve({ text: "ok" });
    }
    const outcomes = await Promise.all([...queued, ...parallel]);
    expect(outcomes.every((o) => o.reply === "ok")).toBe(true);
    await ticks();
    expect(warnings).toEqual([]);
  });
});
