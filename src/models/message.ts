/**
 * The conversation as the core keeps it: OpenAI chat-completions roles, which
 * is also what the history API returns. Adapters translate at the edge.
 */

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A piece of a user message: text, or an image by URL (`https://...` or a `data:image/...;base64,` URL). */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string; detail?: "auto" | "low" | "high" } };

/** A thinking block of an Anthropic answer, exactly as received (the signature proves it unaltered). */
export type ThinkingBlock = { type: "thinking"; thinking: string; signature: string } | { type: "redacted_thinking"; data: string };

/** An Anthropic answer's content block as kept for the rest of the turn: thinking whole, text whole, tool_use by id (its input is the call's arguments). */
export type ReplayBlock = ThinkingBlock | { type: "text"; text: string } | { type: "tool_use"; id: string };

/**
 * What a model thought before an answer, as its provider sent it, for that
 * provider to get back in the next request of the same turn (Anthropic
 * requires its signed thinking blocks with tool use; DeepSeek-style servers
 * their `reasoning_content`). Only adapters read it; it is never shown to a
 * user and is dropped when the turn's messages enter the history.
 */
export type Thinking =
  /** The answer's content blocks in the order received. */
  { format: "anthropic"; blocks: ReplayBlock[] } | { format: "openai"; field: "reasoning_content" | "reasoning"; text: string };

/**
 * A note the history keeps for people and never sends to a model: who
 * allowed or denied a tool call, and when. It rides on a system message
 * (`record`), so the history API shows it in OpenAI roles; a turn leaves
 * such messages out of what it sends (`forModel`).
 */
export interface HistoryRecord {
  readonly type: string;
  readonly [field: string]: unknown;
}

export type ChatMessage =
  | { role: "system"; content: string; record?: HistoryRecord }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[]; thinking?: Thinking }
  | {
      role: "tool";
      tool_call_id: string;
      content: string;
      is_error?: boolean;
      /** What the chat user was shown of this result (a result that is not silent): kept so a reloaded page shows it again; never sent to a model. */
      shown?: string;
      /** The tool's structured details (JSON), for a tool that asked to keep them (the phases plan after a todo call): read back after a restart; never sent to a model. */
      details?: unknown;
    };

/** The messages as a model gets them: a tool message without `shown` and `details` (what the user saw, and what features keep, are never the model's). */
export function forModel(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map(modelView);
}

/** One message as forModel makes it: the same object unless it is a tool result with what only people see. */
export function modelView(message: ChatMessage): ChatMessage {
  if (message.role !== "tool" || (message.shown === undefined && message.details === undefined)) return message;
  const { shown: _shown, details: _details, ...rest } = message;
  return rest;
}

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** The text of a message's content (a user message's text parts, joined by blank lines). */
export function textOf(content: string | readonly ContentPart[] | null): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n\n");
}

/** The message without what only the rest of its turn needs (its thinking); the same object when there is none. */
export function withoutThinking(message: ChatMessage): ChatMessage {
  if (message.role !== "assistant" || message.thinking === undefined) return message;
  const { thinking: _dropped, ...kept } = message;
  return kept;
}

/** Whether the message is a record for people (`HistoryRecord`), which no model is sent. */
export function isRecord(message: ChatMessage): boolean {
  return message.role === "system" && message.record !== undefined;
}
