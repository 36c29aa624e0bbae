import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { ToolStates } from "../../src/tools/tool-states.js";
import { type ToolState, defineTool, toolResult } from "../../src/tools/tool.js";

/** Tools for tests: each shows one kind of behaviour. */

export const echoTool = defineTool({
  name: "echo",
  description: "Repeats the text to the user.",
  parameters: z.strictObject({ text: z.string().describe("what to say") }),
  enabledByDefault: true,
  execute: ({ text }) => toolResult.user(`echo: ${text}`),
});

export const whisperTool = defineTool({
  name: "whisper",
  description: "Tells the model something the user must not see.",
  parameters: z.strictObject({ text: z.string() }),
  enabledByDefault: true,
  execute: ({ text }) => ({ forLLM: `secret: ${text}`, forUser: `LEAK ${text}`, silent: true, isError: false }),
});

export const boomTool = defineTool({
  name: "boom",
  description: "Always throws.",
  parameters: z.object({}),
  enabledByDefault: true,
  execute: () => {
    throw new Error("kaboom");
  },
});

export const offTool = defineTool({
  name: "off",
  description: "Disabled unless the config enables it.",
  parameters: z.object({}),
  execute: () => toolResult.text("off ran"),
});

export const waitTool = defineTool({
  name: "wait",
  description: "Waits until aborted or for ms.",
  parameters: z.object({ ms: z.number().default(60_000) }),
  enabledByDefault: true,
  execute: async ({ ms }, ctx) => {
    await sleep(ms, undefined, { signal: ctx.signal });
    return toolResult.text(`waited ${ms}`);
  },
});

export const testTools = [echoTool, whisperTool, boomTool, offTool, waitTool];

/** A tool's per-session state outside a runtime, for calling `execute` directly. */
export function looseState(): ToolState {
  return new ToolStates().view("test", "main", "agent:main:http:test");
}
