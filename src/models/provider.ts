import type { ChatMessage, Thinking, ToolCall, ToolSpec } from "./message.js";
import type { RequestMemo } from "./request-memo.js";

export interface ModelRequest {
  messages: readonly ChatMessage[];
  /** Sorted by name; empty when the agent has no tools. */
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** What a client asked of this answer (the OpenAI-compatible route), over the model entry's own settings. */
  sampling?: Sampling;
  /**
   * Someone follows this answer as it streams (a streamed request): a model
   * that has its whole answer at once (the built-in one) may hand it over in
   * paced pieces, so streaming can be seen.
   */
  watched?: boolean;
  /** The JSON of the messages the session's last call sent (its turn's, or its last turn's: RequestMemos), which this call's body copies from. */
  memo?: RequestMemo;
}

/** The structure an answer must have: any JSON object, or JSON matching a schema. */
export type ResponseFormat = { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict?: boolean };

/** Sampling and structure a client asks for, each in the provider's own form on the wire. */
export interface Sampling {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: readonly string[];
  seed?: number;
  responseFormat?: ResponseFormat;
  /** false: at most one tool call per answer. */
  parallelToolCalls?: boolean;
  /** Whether (and which) tool the answer must call: the client's `tool_choice`, for the first call of a turn. */
  toolChoice?: ToolChoice;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** A piece of the answer, delivered as it arrives. */
export type ModelDelta =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool_call"; index: number; id?: string; name?: string; arguments?: string };

/**
 * Tokens as the provider counted them, in Anthropic's terms: `inputTokens`
 * leaves out the prompt tokens read from or written to the cache (an
 * OpenAI-compatible `prompt_tokens` less its `cached_tokens`), so the whole
 * prompt is `promptTokensOf`.
 */
export interface Usage {
  /** Prompt tokens neither read from nor written to the provider's prompt cache. */
  inputTokens?: number;
  outputTokens?: number;
  /** Input tokens written to the provider's prompt cache (Anthropic's `cache_creation_input_tokens`). */
  cacheCreationInputTokens?: number;
  /** Input tokens read from the provider's prompt cache (`cache_read_input_tokens`; OpenAI's `cached_tokens`). */
  cacheReadInputTokens?: number;
}

/** Every prompt token of a call: the uncached ones and those read from or written to the cache. */
export function promptTokensOf(usage: Usage): number {
  return (usage.inputTokens ?? 0) + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
}

export interface ModelResponse {
  /** The answer text; null when the model only called tools. */
  text: string | null;
  toolCalls: ToolCall[];
  /** Reasoning the model exposed, kept apart from the answer. */
  reasoning?: string;
  /** The reasoning as the provider must get it back within the turn (see `Thinking`). */
  thinking?: Thinking;
  usage?: Usage;
  finishReason?: string;
  /** The model_name of the entry that answered (differs from the asked one after a fallback). */
  modelName: string;
}

/**
 * What the turn loop needs from a model: one call, deltas reported through
 * `onDelta` as they arrive, the whole response at the end. Failures throw
 * ModelError; an abort of `request.signal` rejects at once.
 */
export interface ModelProvider {
  /** The model_name this provider serves. */
  readonly name: string;
  /** False when the model takes no images (the entry's `vision: false`, the built-in model). */
  readonly vision?: boolean;
  chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse>;
  /** Loads what its first call would load (its answer's reader), so that call does not wait for it; the gateway asks once it listens. */
  warm?(): Promise<void>;
}
