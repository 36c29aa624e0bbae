import type { Reply } from "./fake-openai.js";

/**
 * Replies in the Anthropic Messages wire format, for the generic
 * FakeModelServer (see fake-openai.ts): whole messages and SSE streams of
 * `message_start`, `content_block_*`, `message_delta`, `message_stop`.
 */

export type AnthropicEvent = { type: string } & Record<string, unknown>;

let messageCounter = 0;

/** One SSE chunk per event, each named with `event:` as the API does. */
export function anthropicSse(events: AnthropicEvent[]): string[] {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

export function messageStart(inputTokens = 12): AnthropicEvent {
  return {
    type: "message_start",
    message: {
      id: `msg_${++messageCounter}`,
      type: "message",
      role: "assistant",
      model: "claude-fake",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  };
}

export function messageEnd(stopReason: string, outputTokens = 7): AnthropicEvent[] {
  return [{ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }, { type: "message_stop" }];
}

export function textBlock(index: number, ...parts: string[]): AnthropicEvent[] {
  return [
    { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ...parts.map((text) => ({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index },
  ];
}

export function toolUseBlock(index: number, id: string, name: string, ...jsonParts: string[]): AnthropicEvent[] {
  return [
    { type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } },
    ...jsonParts.map((partial_json) => ({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })),
    { type: "content_block_stop", index },
  ];
}

/** A streamed answer made of text. */
export function anthropicTextStream(...parts: string[]): Reply {
  return { chunks: anthropicSse([messageStart(), ...textBlock(0, ...parts), ...messageEnd("end_turn")]) };
}

/** A whole (non-streamed) message. */
export function anthropicMessage(content: Record<string, unknown>[], stopReason = "end_turn"): Reply {
  return {
    json: {
      id: `msg_${++messageCounter}`,
      type: "message",
      role: "assistant",
      model: "claude-fake",
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 7 },
    },
  };
}

/** An error answer as the API sends it. */
export function anthropicError(status: number, type: string, message: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, json: { type: "error", error: { type, message } } };
}
