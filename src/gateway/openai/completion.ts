import { promptTokensOf } from "../../runtime/turn/usage.js";
import type { MessageEvent } from "../../runtime/streams/message-stream.js";
import type { MessageOutcome, ToolCall } from "../../runtime/options.js";

/**
 * The assistant content of an OpenAI-style answer, as a view of the
 * message's events: what a chat user would see, in order. The model's text
 * as it streams (before tool calls too), each non-silent tool result's
 * text, a command's reply; each of these apart from the one before by a
 * blank line. Tool plumbing (calls, arguments, silent results, notices)
 * never is content. The same pieces make the streamed chunks and the whole
 * answer, so both say the same.
 */
export class AssistantContent {
  private written = false;
  /** Whether the last piece was the model's text (the next text continues it). */
  private inText = false;

  /** The content an event adds ("" for none). */
  add(event: MessageEvent): string {
    switch (event.type) {
      case "text.delta": {
        const piece = !this.inText && this.written ? `\n\n${event.text}` : event.text;
        this.inText = true;
        return this.put(piece);
      }
      case "tool.start":
        this.inText = false;
        return "";
      case "tool.end":
        this.inText = false;
        return event.text ? this.block(event.text) : "";
      case "delivery":
        // Tool output is its tool.end's text and the answer is the model's text; a command's reply is neither.
        return event.from === "command" ? this.block(event.text) : "";
      default:
        return "";
    }
  }

  /** What the end of a message adds: deliveries kept for the session (a background result), and `/stop`'s reply. */
  end(outcome: MessageOutcome): string {
    const late = [...outcome.earlier, ...(outcome.stopped ? [outcome.delivered.at(-1)!] : [])];
    return late.map((d) => this.block(d.text)).join("");
  }

  private block(text: string): string {
    this.inText = false;
    return this.put(this.written ? `\n\n${text}` : text);
  }

  private put(piece: string): string {
    if (piece !== "") this.written = true;
    return piece;
  }
}

export interface CompletionMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  /** The agent, as the client named it. */
  model: string;
}

/** OpenAI's finish reason: `tool_calls` when it ends with calls of the client's tools, `length` when a limit cut the answer (max_tokens, max_tool_iterations). */
export function finishReason(outcome: MessageOutcome): "stop" | "length" | "tool_calls" {
  if (outcome.clientCalls) return "tool_calls";
  return outcome.truncated ? "length" : "stop";
}

/** The client's tool calls as OpenAI writes them (in a stream's delta, each with its index). */
export function toolCallsOf(calls: readonly ToolCall[], indexed = false): Record<string, unknown>[] {
  return calls.map((call, index) => ({
    ...(indexed ? { index } : {}),
    id: call.id,
    type: "function",
    function: { name: call.function.name, arguments: call.function.arguments },
  }));
}

/** OpenAI's usage object, or nothing when the provider reported none: cached tokens inside prompt_tokens, as OpenAI counts them, and said apart. */
export function usageOf(outcome: MessageOutcome): {
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
} {
  if (!outcome.usage) return {};
  const { outputTokens, cacheReadInputTokens } = outcome.usage;
  const prompt = promptTokensOf(outcome.usage);
  return {
    usage: {
      prompt_tokens: prompt,
      completion_tokens: outputTokens,
      total_tokens: prompt + outputTokens,
      ...(cacheReadInputTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: cacheReadInputTokens } }),
    },
  };
}

/** A whole `chat.completion`. */
export function completion(meta: CompletionMeta, content: string, outcome: MessageOutcome): Record<string, unknown> {
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: outcome.clientCalls
          ? { role: "assistant", content: content === "" ? null : content, refusal: null, tool_calls: toolCallsOf(outcome.clientCalls) }
          : { role: "assistant", content, refusal: null },
        logprobs: null,
        finish_reason: finishReason(outcome),
      },
    ],
    ...usageOf(outcome),
  };
}

/** One `chat.completion.chunk`: a delta, or (`delta` null) the usage-only chunk that ends a stream with usage. */
export function chunk(
  meta: CompletionMeta,
  delta: Record<string, unknown> | null,
  opts: { finish?: "stop" | "length" | "tool_calls"; includeUsage: boolean; usage?: Record<string, unknown> | null },
): Record<string, unknown> {
  return {
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices: delta === null ? [] : [{ index: 0, delta, logprobs: null, finish_reason: opts.finish ?? null }],
    // With include_usage, every chunk has `usage`: null but the last one's.
    ...(opts.includeUsage ? { usage: opts.usage ?? null } : {}),
  };
}
