import { createHmac } from "node:crypto";
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

/*
 * Extended thinking as the API signs and checks it. The fake signs a thinking
 * block's text with a key of its own (the real signature is opaque too), and
 * refuses a request whose thinking blocks were dropped or altered, as the API
 * does when thinking is on and tools are used.
 */

const SIGNING_KEY = "fake-anthropic-signing-key";

/** The signature the fake gives (and accepts for) exactly this thinking text. */
export function signatureOf(thinking: string): string {
  return createHmac("sha256", SIGNING_KEY).update(thinking).digest("base64");
}

/** Opaque data of a redacted thinking block the fake issued (and accepts back unaltered). */
export function redactedData(seed: string): string {
  const body = Buffer.from(seed).toString("base64");
  return `${body}.${createHmac("sha256", SIGNING_KEY).update(body).digest("base64")}`;
}

/** A streamed thinking block: its text in pieces, then its whole signature in one `signature_delta` just before the block stops, as the API sends it. */
export function thinkingBlock(index: number, ...parts: string[]): AnthropicEvent[] {
  return [
    { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
    ...parts.map((thinking) => ({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } })),
    { type: "content_block_delta", index, delta: { type: "signature_delta", signature: signatureOf(parts.join("")) } },
    { type: "content_block_stop", index },
  ];
}

/** A redacted thinking block: whole in its content_block_start. */
export function redactedThinkingBlock(index: number, seed: string): AnthropicEvent[] {
  return [
    { type: "content_block_start", index, content_block: { type: "redacted_thinking", data: redactedData(seed) } },
    { type: "content_block_stop", index },
  ];
}

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type WireBlock = any;

/**
 * What the API would refuse in a request with thinking on (undefined when it
 * passes): a thinking block whose signature does not match its text, redacted
 * data the fake never issued, and, while a tool result answers the last
 * assistant message, that message not starting with its thinking.
 */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON
export function thinkingProblem(body: any): string | undefined {
  if (body?.thinking?.type !== "enabled") return undefined;
  const messages: { role: string; content: string | WireBlock[] }[] = body.messages ?? [];
  for (const [i, message] of messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [j, block] of message.content.entries()) {
      if (block.type === "thinking" && block.signature !== signatureOf(block.thinking)) {
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
      if (block.type === "redacted_thinking") {
        const [data, mac] = String(block.data).split(".");
        if (
          mac !==
          createHmac("sha256", SIGNING_KEY)
            .update(data ?? "")
            .digest("base64")
        )
          return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
      }
    }
  }
  const last = messages.at(-1);
  const answered = Array.isArray(last?.content) && last.content.some((b: WireBlock) => b.type === "tool_result");
  const assistant = messages.at(-2);
  if (answered && assistant?.role === "assistant") {
    const first = Array.isArray(assistant.content) ? assistant.content[0] : { type: "text" };
    if (first?.type !== "thinking" && first?.type !== "redacted_thinking") {
      return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
    }
  }
  return undefined;
}

/** A handler that answers the scripted replies in order, after refusing (400) any request `thinkingProblem` finds fault with. */
export function checkingThinking(...replies: Reply[]): (request: { body: unknown }) => Reply {
  let next = 0;
  return (request) => {
    const problem = thinkingProblem(request.body);
    if (problem) return anthropicError(400, "invalid_request_error", problem);
    return replies[next++] ?? anthropicError(500, "api_error", "the fake server has no scripted reply left");
  };
}
