import { onTestFinished } from "vitest";
import type { AnthropicEntry } from "../../src/models/anthropic.js";
import type { OpenAIEntry } from "../../src/models/openai.js";

/** An entry of either HTTP provider, with the options of both (a test may give one the other's, to see it refused). */
export type AnyEntry = AnthropicEntry & OpenAIEntry;
import { ModelError } from "../../src/errors.js";
import type { ChatMessage, ToolSpec } from "../../src/models/message.js";
import type { ModelDelta, ModelRequest } from "../../src/models/provider.js";
import type { TransportOptions } from "../../src/models/transport.js";
import { FakeModelServer, type Handler } from "./fake-openai.js";

/** Helpers for provider tests: a fake server closed after the test, instant retries, requests, failures. */

export const SECRET_KEY = "sk-test-secret-key-123";

export async function fakeServer(handler?: Handler): Promise<FakeModelServer> {
  const server = await FakeModelServer.start(handler);
  onTestFinished(() => server.close());
  return server;
}

/** Transport options whose sleep returns at once and records what it was asked to wait. */
export function instantRetries(extra: TransportOptions = {}): TransportOptions & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      signal.throwIfAborted();
    },
    random: () => 0.5,
    ...extra,
  };
}

export function modelEntry(provider: "openai" | "anthropic", apiBase: string, extra: Partial<AnyEntry> = {}): AnyEntry {
  return {
    model_name: provider === "openai" ? "gpt" : "claude",
    provider,
    model: provider === "openai" ? "fake-model" : "claude-fake",
    api_base: apiBase,
    api_key: SECRET_KEY,
    ...extra,
  };
}

export function ask(
  messages: ChatMessage[] = [{ role: "user", content: "hi" }],
  tools: ToolSpec[] = [],
  signal: AbortSignal = new AbortController().signal,
): ModelRequest {
  return { messages, tools, signal };
}

/** Collects the deltas handed to onDelta. */
export function deltaLog(): { deltas: ModelDelta[]; onDelta: (delta: ModelDelta) => void } {
  const deltas: ModelDelta[] = [];
  return { deltas, onDelta: (delta) => deltas.push(delta) };
}

/** The ModelError a promise rejects with (fails the test when it resolves or throws something else). */
export async function modelFailure(promise: Promise<unknown>): Promise<ModelError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ModelError) return error;
    throw error;
  }
  throw new Error("expected the call to fail with a ModelError");
}

export const weatherTool: ToolSpec = {
  name: "weather",
  description: "Current weather of a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
};

export const clockTool: ToolSpec = {
  name: "clock",
  description: "The time now.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
};

/** A conversation with one round of two tool calls (the second failed). */
export function toolRound(): ChatMessage[] {
  return [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Weather in Oslo and the time?" },
    {
      role: "assistant",
      content: "Checking.",
      tool_calls: [
        { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
        { id: "call_b", type: "function", function: { name: "clock", arguments: "{}" } },
      ],
    },
    { role: "tool", tool_call_id: "call_a", content: "4°C, rain" },
    { role: "tool", tool_call_id: "call_b", content: "clock is broken", is_error: true },
  ];
}
