import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { readAgent } from "../../src/agents/catalog.js";
import { applyEnvOverrides } from "../../src/config/env.js";
import { builtinConfigSchema, builtinHouse } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { formatBytes } from "../../src/bytes.js";
import { ToolSet } from "../../src/tools/tool-set.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { ControlledModel, single } from "../support/controlled-model.js";

const configSchema = builtinConfigSchema();

/**
 * A tool result is capped in the tool engine, before it enters the history:
 * every tool (built-in, plugin, MCP) gets the same cap, tools.max_result_bytes
 * (default 64 KiB), for the model and the user alike, with a note saying so.
 */

const MiB = 1024 * 1024;

/** A tool that answers what the test gives it, as the tool would. */
const answering = (answer: () => unknown) =>
  defineTool({
    name: "big",
    description: "Answers a lot.",
    parameters: z.object({}),
    enabledByDefault: true,
    execute: () => answer() as ReturnType<typeof toolResult.text>,
  });

const scope = { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1", signal: new AbortController().signal };
const call = { id: "c1", type: "function" as const, function: { name: "big", arguments: "{}" } };

describe("the size of a tool result", () => {
  it("a result within the cap is left as it is", async () => {
    const text = "a".repeat(64 * 1024);
    const set = new ToolSet([answering(() => toolResult.user(text))]);
    expect(await set.execute(call, scope)).toEqual({ forLLM: text, forUser: text, silent: false, isError: false });
  });

  it("a 20 MiB result keeps its first 64 KiB, for the model and the user, with a note saying so", async () => {
    const text = "b".repeat(20 * MiB);
    const set = new ToolSet([answering(() => toolResult.text(text, text))]);
    const result = await set.execute(call, scope);
    const note = "\n[... cut: the result was 20 MiB; the first 64 KiB are kept]";
    expect(result.forLLM).toBe(`${"b".repeat(64 * 1024)}${note}`);
    expect(result.forUser).toBe(result.forLLM);
    expect(result.isError).toBe(false);
  });

  it("an error result is capped too (a tool that throws a huge message)", async () => {
    const set = new ToolSet(
      [
        answering(() => {
          throw new Error("x".repeat(3 * MiB));
        }),
      ],
      { maxResultBytes: 1024 },
    );
    const result = await set.execute(call, scope);
    expect(result.isError).toBe(true);
    expect(Buffer.byteLength(result.forLLM)).toBeLessThan(1024 + 100);
    expect(result.forLLM).toMatch(/^tool "big" failed: x+\n\[\.\.\. cut: the result was 3 MiB; the first 1 KiB are kept\]$/);
  });

  it("the cut never splits a character", async () => {
    const set = new ToolSet([answering(() => toolResult.silent("€".repeat(1000)))], { maxResultBytes: 1024 });
    const result = await set.execute(call, scope);
    // 341 euro signs are 1023 bytes; a 342nd would not fit whole.
    expect(result.forLLM).toBe(`${"€".repeat(341)}\n[... cut: the result was 2.9 KiB; the first 1 KiB are kept]`);
    expect(result.silent).toBe(true);
  });

  it("sizes read as people write them", () => {
    expect([812, 1024, 65_536, 3_000, 21_286_092].map(formatBytes)).toEqual(["812 bytes", "1 KiB", "64 KiB", "2.9 KiB", "20.3 MiB"]);
  });

  it("tools.max_result_bytes sets the cap; the history keeps only the capped result", async () => {
    const model = new ControlledModel();
    const agents = new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nPrompt.").agent]]);
    const runtime = new Runtime({
      config: configSchema.parse({
        tools: { max_result_bytes: 2048, subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } },
      }),
      agents,
      models: single(model),
      tools: [answering(() => toolResult.user("c".repeat(5 * MiB)))],
    });
    onTestFinished(() => runtime.close(0));
    const turn = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "go" });
    (await model.calls(1))[0]!.resolve({ toolCalls: [call] });
    const [, second] = await model.calls(2);
    const kept = `${"c".repeat(2048)}\n[... cut: the result was 5 MiB; the first 2 KiB are kept]`;
    // The model gets the capped result only (without what the user was shown).
    expect(second!.request.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c1", content: kept });
    second!.resolve({ text: "done" });
    const outcome = await turn;
    expect(outcome.delivered).toEqual([
      { from: "big", text: kept },
      { from: "agent", text: "done" },
    ]);
    // The history keeps the capped result, and what the user was shown of it (the same capped text), never the whole.
    expect((await runtime.historyOf("agent:main:http:s"))[2]).toEqual({ role: "tool", tool_call_id: "c1", content: kept, shown: kept });
  });

  it("tools.max_result_bytes is checked: at least 1 KiB, and not a tool", () => {
    expect(configSchema.safeParse({ tools: { max_result_bytes: 10 } }).success).toBe(false);
    expect(configSchema.safeParse({ tools: { max_result_bytes: 4096 } }).success).toBe(true);
    expect(applyEnvOverrides({}, { PICOCLAW_TOOLS_MAX_RESULT_BYTES_ENABLED: "true" }, builtinHouse().layout).problems).toEqual([
      "PICOCLAW_TOOLS_MAX_RESULT_BYTES_ENABLED: tools.max_result_bytes is not a tool",
    ]);
  });
});
