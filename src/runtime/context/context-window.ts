import type { ChatMessage, ToolSpec } from "../../models/message.js";

/**
 * How much of a conversation fits a model's context window, estimated
 * cheaply: characters divided by characters per token (3 at first, then
 * what the provider's reported `usage` shows for that model), plus a little
 * per message. No tokenizer: the estimate only has to be good enough that
 * a request rarely overflows, and a request that does is fitted again with
 * what the provider's error said (context-provider.ts).
 */

/** The window a model entry has when its `context_window` is not set: small enough for the common models. */
export const DEFAULT_CONTEXT_WINDOW = 32_768;
/** Room left for the answer when the entry sets no `max_tokens` (at most a quarter of the window). */
export const DEFAULT_ANSWER_TOKENS = 4_096;
/** Characters per token before any usage was seen: cautious (English runs at about 4, code and other scripts lower). */
export const START_CHARS_PER_TOKEN = 3;
/** What a message costs besides its text (role, separators). */
const MESSAGE_TOKENS = 4;
/** What a picture or another non-text part is counted as. */
const PART_TOKENS = 1_000;

/** Characters of a message's text (tool calls and ids included), and its non-text parts. */
function measure(message: ChatMessage): { chars: number; parts: number } {
  let chars = 0;
  let parts = 0;
  const content: unknown = message.content;
  if (typeof content === "string") chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content as unknown[]) {
      const text = (part as { text?: unknown } | null)?.text;
      if (typeof text === "string") chars += text.length;
      else parts++;
    }
  }
  if (message.role === "assistant")
    for (const call of message.tool_calls ?? []) chars += call.id.length + call.function.name.length + call.function.arguments.length + 16;
  if (message.role === "tool") chars += message.tool_call_id.length;
  return { chars, parts };
}

/** Characters of the tools' descriptions and schemas as JSON. An agent's tool list is one array, made once, so its size is measured once. */
const toolsSizes = new WeakMap<readonly ToolSpec[], number>();
function toolsChars(tools: readonly ToolSpec[]): number {
  if (tools.length === 0) return 0;
  let chars = toolsSizes.get(tools);
  if (chars === undefined) toolsSizes.set(tools, (chars = JSON.stringify(tools).length));
  return chars;
}

/** Characters of a request's text: its messages and its tools' descriptions and schemas. */
export function requestChars(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
  let chars = toolsChars(tools);
  for (const message of messages) chars += measure(message).chars;
  return chars;
}

/** `requestChars` of a request whose messages `sums` sums up (no pass over them). */
export function summedRequestChars(sums: MessageSums, tools: readonly ToolSpec[]): number {
  return toolsChars(tools) + sums.chars;
}

export function estimateTokens(messages: readonly ChatMessage[], charsPerToken: number): number {
  let tokens = 0;
  for (const message of messages) {
    const { chars, parts } = measure(message);
    tokens += Math.ceil(chars / charsPerToken) + MESSAGE_TOKENS + parts * PART_TOKENS;
  }
  return tokens;
}

/** Characters, messages and non-text parts of some messages, summed: what `boundTokens` needs. */
export interface MessageSums {
  chars: number;
  count: number;
  parts: number;
}

/** `into` plus the sums of `messages[from..]` (a new object; `into` is left as it is). */
export function sumMessages(messages: readonly ChatMessage[], from = 0, into: MessageSums = { chars: 0, count: 0, parts: 0 }): MessageSums {
  let { chars, parts } = into;
  for (let i = from; i < messages.length; i++) {
    const measured = measure(messages[i]!);
    chars += measured.chars;
    parts += measured.parts;
  }
  return { chars, count: into.count + Math.max(0, messages.length - from), parts };
}

/**
 * At least `estimateTokens` of the messages `sums` sums up (each message's
 * characters rounded up to whole tokens adds under one token a message),
 * found from the sums alone: a request whose bound fits fits.
 */
export function boundTokens(sums: MessageSums, charsPerToken: number): number {
  return Math.ceil(sums.chars / charsPerToken) + sums.count * (MESSAGE_TOKENS + 1) + sums.parts * PART_TOKENS;
}

export function toolTokens(tools: readonly ToolSpec[], charsPerToken: number): number {
  return tools.length > 0 ? Math.ceil(toolsChars(tools) / charsPerToken) : 0;
}

/** A request split as fitting sees it. */
export interface RequestParts {
  /** The leading system messages (the agent's prompt): always sent. */
  prefix: ChatMessage[];
  /** Earlier exchanges, oldest first, each starting with its user message. */
  exchanges: ChatMessage[][];
  /** This turn: its note, its user message and its tool rounds so far: always sent. */
  current: ChatMessage[];
}

/** Splits a turn's request: [prompt] + history + [note] + user message + this turn's rounds. */
export function splitRequest(messages: readonly ChatMessage[]): RequestParts {
  let prefixEnd = 0;
  while (prefixEnd < messages.length && messages[prefixEnd]!.role === "system") prefixEnd++;
  let currentStart = messages.findLastIndex((m) => m.role === "user");
  if (currentStart < prefixEnd) return { prefix: messages.slice(0, prefixEnd), exchanges: [], current: messages.slice(prefixEnd) };
  // A one-turn system note sits just before the turn's message.
  while (currentStart - 1 >= prefixEnd && messages[currentStart - 1]!.role === "system") currentStart--;
  // Each exchange cut out once its end is known: arrays of their exact length (a history holds hundreds of them).
  const exchanges: ChatMessage[][] = [];
  let start = prefixEnd;
  for (let i = prefixEnd + 1; i <= currentStart; i++) {
    if (i === currentStart || messages[i]!.role === "user") {
      exchanges.push(messages.slice(start, i));
      start = i;
    }
  }
  return { prefix: messages.slice(0, prefixEnd), exchanges, current: messages.slice(currentStart) };
}

export interface Fitted {
  messages: readonly ChatMessage[];
  /** Exchanges left out, oldest first (the oldest ones of the history). */
  dropped: ChatMessage[][];
  /** Exchanges sent. */
  kept: ChatMessage[][];
  /** Estimated tokens of what is sent, tools included (of a request sent whole, possibly a bound a little above the estimate). */
  tokens: number;
}

/**
 * The request within `budget` tokens: the prefix, the tools and this turn
 * always; then as many whole exchanges as fit, the most recent first.
 * `keepAtMost` caps the exchanges kept (a retry after an overflow keeps
 * fewer than before). `whole`: the messages `parts` were split from, given
 * back as they are when every exchange is kept (no copy of the history).
 */
export function fitRequest(
  parts: RequestParts,
  tools: readonly ToolSpec[],
  budget: number,
  charsPerToken: number,
  keepAtMost = Number.POSITIVE_INFINITY,
  whole?: readonly ChatMessage[],
): Fitted {
  let tokens = toolTokens(tools, charsPerToken) + estimateTokens(parts.prefix, charsPerToken) + estimateTokens(parts.current, charsPerToken);
  let from = parts.exchanges.length;
  while (from > 0 && parts.exchanges.length - from < keepAtMost) {
    const cost = estimateTokens(parts.exchanges[from - 1]!, charsPerToken);
    if (tokens + cost > budget) break;
    tokens += cost;
    from--;
  }
  if (from === 0 && whole) return { messages: whole, dropped: [], kept: parts.exchanges, tokens };
  const kept = parts.exchanges.slice(from);
  // A loop, not `kept.flat()`: V8's flat is ten times slower, and this runs for every model call over the whole history.
  const messages = parts.prefix.slice();
  for (const exchange of kept) for (const message of exchange) messages.push(message);
  for (const message of parts.current) messages.push(message);
  return { messages, dropped: parts.exchanges.slice(0, from), kept, tokens };
}

/** Characters per token stay within what text has: under 1 (emoji, some scripts) to about 6 (the most regular English prose). */
const clampRatio = (ratio: number) => Math.min(6, Math.max(0.5, ratio));

/**
 * What one gateway has learnt of each model's tokens: characters per token
 * (from the `usage` providers report), and a ceiling below a request that
 * overflowed (so the next turn does not try the same size again).
 */
export class TokenGauge {
  private readonly ratios = new Map<string, number>();
  private readonly ceilings = new Map<string, number>();

  charsPerToken(model: string): number {
    return this.ratios.get(model) ?? START_CHARS_PER_TOKEN;
  }

  /**
   * A request of `chars` characters in `messages` messages was counted as
   * `inputTokens` by the provider. A count no text has (under half a
   * character a token, or over ten: a provider that leaves cached tokens out,
   * or reports something else) teaches nothing.
   */
  observe(model: string, chars: number, messages: number, inputTokens: number): void {
    const textTokens = inputTokens - messages * MESSAGE_TOKENS;
    if (chars < 200 || textTokens <= 0) return;
    const seen = chars / textTokens;
    if (seen < 0.5 || seen > 10) return;
    const before = this.ratios.get(model);
    this.ratios.set(model, clampRatio(before === undefined ? seen : (before + seen) / 2));
  }

  /** The ceiling learnt for the model, if a request overflowed. */
  ceiling(model: string): number | undefined {
    return this.ceilings.get(model);
  }

  /** A request estimated at `tokens` was too long for the model; the provider may have said its true window. */
  overflowed(model: string, tokens: number, window?: number): void {
    const ceiling = Math.min(this.ceilings.get(model) ?? Number.POSITIVE_INFINITY, Math.floor(tokens * 0.9), window ?? Number.POSITIVE_INFINITY);
    this.ceilings.set(model, ceiling);
  }

  /** The provider said how many tokens the request was: the estimate was off by that much. */
  counted(model: string, chars: number, messages: number, promptTokens: number): void {
    const textTokens = promptTokens - messages * MESSAGE_TOKENS;
    if (textTokens > 0) this.ratios.set(model, clampRatio(chars / textTokens));
  }
}
