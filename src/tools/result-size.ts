import type { ToolResult } from "./tool.js";

/**
 * The size cap on a tool result's texts (`tools.max_result_bytes`): what a
 * tool returns enters the session's history and every later model request,
 * so one answer of megabytes would weigh on the whole conversation. A text
 * over the cap keeps its first bytes, and a note tells the model so.
 */

export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/** `812 bytes`, `64 KiB`, `20.3 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KiB"] : [bytes / (1024 * 1024), "MiB"];
  return `${Number(value.toFixed(1))} ${unit}`;
}

/** The longest start of `text` that fits in `maxBytes` of UTF-8 (never half a character). */
export function cutToBytes(text: string, maxBytes: number): string {
  const encoded = Buffer.from(text.slice(0, maxBytes), "utf8");
  if (encoded.byteLength <= maxBytes) return encoded.toString("utf8");
  let end = maxBytes;
  // Step back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString("utf8");
}

/** `text` within `maxBytes`, with the note when it was cut. */
export function capText(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  return `${cutToBytes(text, maxBytes)}\n[... cut: the result was ${formatBytes(bytes)}; the first ${formatBytes(maxBytes)} are kept]`;
}

/** The result with both its texts within `maxBytes`. */
export function capResult(result: ToolResult, maxBytes: number): ToolResult {
  const forLLM = capText(result.forLLM, maxBytes);
  const forUser = result.forUser === undefined ? undefined : capText(result.forUser, maxBytes);
  if (forLLM === result.forLLM && forUser === result.forUser) return result;
  return { ...result, forLLM, ...(forUser === undefined ? {} : { forUser }) };
}
