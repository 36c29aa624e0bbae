import { cutToBytes, formatBytes } from "../bytes.js";
import type { ToolResult } from "./tool.js";

/**
 * The size cap on a tool result's texts (`tools.max_result_bytes`): what a
 * tool returns enters the session's history and every later model request,
 * so one answer of megabytes would weigh on the whole conversation. A text
 * over the cap keeps its first bytes, and a note tells the model so.
 */

export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

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
