import type { ChatMessage } from "../models/message.js";
import { jsonBytes, jsonPrefix, utf8Bytes } from "./size.js";

/**
 * One exchange of a conversation: a user message and everything up to the
 * next one (the model's tool calls, their results, the final reply). A
 * history is dropped an exchange at a time, so it never starts with a tool
 * result whose call is gone. When a single exchange is over a session's
 * limits on its own, `fitExchange` makes it fit.
 */

export interface HistoryLimits {
  /** Messages a session keeps. */
  maxMessages: number;
  /** UTF-8 bytes of the messages' JSON a session keeps. */
  maxBytes: number;
}

/** The note that replaces the end of a text cut to fit. */
export function cutNote(originalBytes: number, maxBytes: number): string {
  return `\n\n[cut: this message was ${originalBytes} bytes; a session's history keeps at most ${maxBytes} (agents.defaults.max_history_bytes)]`;
}

const bytesOf = (messages: readonly ChatMessage[]) => messages.reduce((sum, m) => sum + jsonBytes(m), 0);

/**
 * An exchange that fits the limits on its own. One within them is returned
 * as it is. Otherwise:
 * - over `maxMessages`, it keeps only its user message and its final reply
 *   (the tool rounds in between go: the reply says what came of them);
 * - over `maxBytes`, the longest texts are cut, longest first, each ending
 *   with a note that says so (tool calls and their results stay paired);
 * - if that cannot be enough (the tool calls alone are over), the tool
 *   rounds go as above, and the two texts left are cut.
 * The result always starts with the exchange's user message.
 */
export function fitExchange(exchange: readonly ChatMessage[], limits: HistoryLimits): ChatMessage[] {
  let fitted = exchange.length > limits.maxMessages ? essentials(exchange) : [...exchange];
  if (bytesOf(fitted) <= limits.maxBytes) return fitted;
  let cut = cutTexts(fitted, limits.maxBytes);
  if (bytesOf(cut) <= limits.maxBytes) return cut;
  // Images are never cut (half an image is none): each becomes a note.
  fitted = fitted.map((m) => withoutImages(m, limits.maxBytes));
  cut = cutTexts(fitted, limits.maxBytes);
  if (bytesOf(cut) <= limits.maxBytes) return cut;
  fitted = essentials(fitted);
  return cutTexts(fitted, limits.maxBytes);
}

/** The note that replaces an image left out to fit. */
export function imageNote(urlBytes: number, maxBytes: number): string {
  return `[an image was left out: it took ${urlBytes} bytes; a session's history keeps at most ${maxBytes} (agents.defaults.max_history_bytes)]`;
}

/** A user message with images as text: its text parts, and a note in place of each image. */
function withoutImages(message: ChatMessage, maxBytes: number): ChatMessage {
  if (message.role !== "user" || typeof message.content === "string") return message;
  const text = message.content.map((part) => (part.type === "text" ? part.text : imageNote(utf8Bytes(part.image_url.url), maxBytes))).join("\n\n");
  return { ...message, content: text };
}

/** The user message and the final reply (the last assistant message without tool calls after it), if any. */
function essentials(exchange: readonly ChatMessage[]): ChatMessage[] {
  const first = exchange[0];
  if (!first) return [];
  const reply = exchange.findLast((m, i) => i > 0 && m.role === "assistant" && !m.tool_calls?.length);
  return reply ? [first, reply] : [first];
}

/**
 * Cuts the longest `content` texts to a common cap, found so that the
 * messages' JSON fits `maxBytes` with the notes added. Tries again with a
 * lower cap while the measure disagrees (escapes, notes).
 */
function cutTexts(messages: readonly ChatMessage[], maxBytes: number): ChatMessage[] {
  const texts = messages.map((m) => (typeof m.content === "string" ? m.content : ""));
  const textBytes = texts.map((t) => jsonBytes(t) - 2);
  const total = bytesOf(messages);
  const rest = total - textBytes.reduce((a, b) => a + b, 0);
  const noteBytes = (i: number) => utf8Bytes(cutNote(textBytes[i]!, maxBytes)) + 16;
  const sizeAt = (cap: number) => rest + textBytes.reduce((sum, bytes, i) => sum + (bytes <= cap ? bytes : cap + noteBytes(i)), 0);
  let low = 0;
  let high = Math.max(0, ...textBytes);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (sizeAt(mid) <= maxBytes) low = mid;
    else high = mid - 1;
  }
  let cap = low;
  for (;;) {
    const cut = messages.map((m, i) => (textBytes[i]! > cap ? withContent(m, jsonPrefix(texts[i]!, cap) + cutNote(textBytes[i]!, maxBytes)) : m));
    const over = bytesOf(cut) - maxBytes;
    if (over <= 0 || cap === 0) return cut;
    cap = Math.max(0, cap - over);
  }
}

function withContent(message: ChatMessage, content: string): ChatMessage {
  return { ...message, content } as ChatMessage;
}
