import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { formatBytes } from "../../bytes.js";

/**
 * The most an MCP server may send in one message (`tools.mcp.max_message_bytes`).
 * The SDK's transports would buffer any message whole (HTTP), or drop the
 * whole connection past their own limit (stdio), so every session would
 * lose the server for one big answer. Here an oversized message is read
 * past without being kept, and when it answers a request, that request
 * alone fails: the SDK receives, in its place, a JSON-RPC error for the same
 * id (`tooLargeError`), and the call becomes an error result saying why.
 * The transports' readers are in stdio-buffer.ts and http-fetch.ts.
 */

export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** The error code of the stand-in answer (JSON-RPC's range for implementation errors). */
export const MESSAGE_TOO_LARGE = -32099;

/** Marks the stand-in answer's `data`, so a call can tell it from an error the server sent. */
const MARK = "picoclaw:message_too_large";

/** A JSON-RPC request id. */
export type Id = string | number;

/** The JSON-RPC error that stands in for an answer over the limit; `bytes` when its whole size is known. */
export function tooLargeError(id: Id, limit: number, bytes?: number): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: MESSAGE_TOO_LARGE,
      message: `the answer was over ${formatBytes(limit)}`,
      data: { mark: MARK, limit, ...(bytes === undefined ? {} : { bytes }) },
    },
  };
}

/** What a call tells the model when its answer was over the limit. */
export function tooLargeMessage(server: string, tool: string, limit: number, bytes?: number): string {
  const size = bytes === undefined ? "more" : `${formatBytes(bytes)}, more`;
  return `MCP server "${server}" answered "${tool}" with ${size} than the ${formatBytes(limit)} one message may hold (tools.mcp.max_message_bytes), so the answer was dropped; ask for less at once (a narrower query, a smaller page) or do without it`;
}

/** The size facts of a stand-in answer's error `data`, or undefined for any other error. */
export function tooLarge(data: unknown): { limit: number; bytes?: number } | undefined {
  const d = data as { mark?: unknown; bytes?: unknown; limit?: unknown } | null | undefined;
  if (d?.mark !== MARK || typeof d.limit !== "number") return undefined;
  return { limit: d.limit, ...(typeof d.bytes === "number" ? { bytes: d.bytes } : {}) };
}

const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":7,...` or `{"id":7,...`: how most servers begin a message. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);
/** `...,"jsonrpc":"2.0","id":7}`: how the SDK's servers end one (the last member before the closing brace is top-level). */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);

/** The id of a message seen only by its first and last bytes, when they show it. */
export function idOf(head: string, tail: string): Id | undefined {
  const found = ID_AT_START.exec(head)?.[1] ?? ID_AT_END.exec(tail)?.[1];
  if (found === undefined) return undefined;
  try {
    return JSON.parse(found) as Id;
  } catch {
    return undefined;
  }
}
