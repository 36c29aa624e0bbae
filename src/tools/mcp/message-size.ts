import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { formatBytes } from "../result-size.js";

/**
 * The most an MCP server may send in one message (`tools.mcp.max_message_bytes`).
 * The SDK's transports would buffer any message whole (HTTP), or drop the
 * whole connection past their own limit (stdio), so every session would
 * lose the server for one big answer. Here an oversized message is read
 * past without being kept, and when it answers a request, that request
 * alone fails: the SDK receives, in its place, a JSON-RPC error for the same
 * id (`tooLargeError`), and the call becomes an error result saying why.
 */

export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** The error code of the stand-in answer (JSON-RPC's range for implementation errors). */
export const MESSAGE_TOO_LARGE = -32099;

/** Marks the stand-in answer's `data`, so a call can tell it from an error the server sent. */
const MARK = "picoclaw:message_too_large";

type Id = string | number;

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

/** How many first and last bytes of an oversized message are kept to find its id. */
const EDGE = 512;

/**
 * A drop-in for the SDK's stdio read buffer (one JSON-RPC message a line):
 * lines within `maxBytes` are parsed as the SDK parses them; a longer line
 * is counted but not kept, and becomes a stand-in error answer for its id
 * (or, without one, is reported to `dropped` and skipped).
 */
export class BoundedReadBuffer {
  private parts: Buffer[] = [];
  private size = 0;
  /** Set while reading past an oversized line. */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  private readonly ready: (string | JSONRPCMessage)[] = [];

  constructor(
    private readonly maxBytes: number,
    private readonly dropped: (bytes: number) => void,
  ) {}

  append(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      this.take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  /** The next message, or null when no whole line is waiting. A line that is not a message throws (after it was taken). */
  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    return typeof next === "string" ? deserializeMessage(next) : next;
  }

  clear(): void {
    this.parts = [];
    this.size = 0;
    this.skipping = undefined;
    this.ready.length = 0;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    const skipping = this.skipping;
    if (skipping) {
      skipping.bytes += piece.length;
      skipping.tail = Buffer.concat([skipping.tail, piece]).subarray(-EDGE);
      return;
    }
    if (this.size + piece.length <= this.maxBytes) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    const line = Buffer.concat([...this.parts, piece]);
    this.skipping = { bytes: line.length, head: Buffer.from(line.subarray(0, EDGE)), tail: Buffer.from(line.subarray(-EDGE)) };
    this.parts = [];
    this.size = 0;
  }

  private endLine(): void {
    const skipping = this.skipping;
    if (skipping) {
      this.skipping = undefined;
      const id = idOf(skipping.head.toString("utf8"), skipping.tail.toString("utf8"));
      if (id === undefined) this.dropped(skipping.bytes);
      else this.ready.push(tooLargeError(id, this.maxBytes, skipping.bytes));
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (line.trim() !== "") this.ready.push(line);
  }
}

/** The ids of the requests in a JSON-RPC POST body (one message or a batch). */
function requestIds(body: unknown): Id[] {
  if (typeof body !== "string") return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m: { id?: unknown; method?: unknown }) =>
      typeof m?.method === "string" && (typeof m.id === "number" || typeof m.id === "string") ? [m.id] : [],
    );
  } catch {
    return [];
  }
}

/** Reads at most `maxBytes` of a body; `complete` is false when there was more (the rest is not read). */
async function readAtMost(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ bytes: Uint8Array; complete: boolean; seen: number }> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let seen = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return { bytes: Buffer.concat(parts), complete: true, seen };
      seen += chunk.value.byteLength;
      if (seen > maxBytes) {
        await reader.cancel().catch(() => {});
        return { bytes: Buffer.concat(parts), complete: false, seen };
      }
      parts.push(chunk.value);
    }
  } finally {
    reader.releaseLock();
  }
}

/** The same answer with another body (the length header dropped: the body may be shorter). */
function withBody(response: Response, body: ConstructorParameters<typeof Response>[0]): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** An error body past this is not read: the SDK only quotes it. */
const ERROR_BODY_BYTES = 4 * 1024;

/**
 * A `fetch` for the SDK's streamable HTTP transport that holds no message
 * over `maxBytes`: a JSON answer over it is replaced by the stand-in error
 * for the POST's request; in an SSE stream, an event over it is skipped and,
 * on a POST's stream, replaced by the stand-in error; an error body is read
 * only up to a few KB. `dropped` hears of what could be given to no request.
 */
export function limitedFetch(maxBytes: number, dropped: (bytes: number) => void, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    if (!response.ok) {
      const { bytes } = await readAtMost(response.body, ERROR_BODY_BYTES);
      return withBody(response, bytes);
    }
    const ids = requestIds(init?.body);
    const type = (response.headers.get("content-type") ?? "").toLowerCase();
    if (type.includes("text/event-stream")) return withBody(response, response.body.pipeThrough(sseLimiter(maxBytes, ids, dropped)));
    if (!type.includes("application/json")) return response;
    const read = await readAtMost(response.body, maxBytes);
    if (read.complete) return withBody(response, read.bytes);
    if (ids.length === 0) {
      dropped(read.seen);
      return withBody(response, "[]");
    }
    const errors = ids.map((id) => tooLargeError(id, maxBytes));
    return withBody(response, JSON.stringify(errors.length === 1 ? errors[0] : errors));
  };
}

/**
 * Passes server-sent events through unchanged while each is within
 * `maxBytes`; an event over it is read past, and in its place comes the
 * stand-in error for `ids[0]` (the POST's request), once.
 */
function sseLimiter(maxBytes: number, ids: readonly Id[], dropped: (bytes: number) => void): TransformStream<Uint8Array, Uint8Array> {
  let event: Uint8Array[] = [];
  let eventBytes = 0;
  let skipped: number | undefined;
  let lineHasText = false;
  let answered = false;
  const endEvent = (out: TransformStreamDefaultController<Uint8Array>) => {
    if (skipped !== undefined) {
      const id = answered ? undefined : ids[0];
      if (id === undefined) dropped(skipped);
      else {
        answered = true;
        out.enqueue(Buffer.from(`event: message\ndata: ${JSON.stringify(tooLargeError(id, maxBytes, skipped))}\n\n`));
      }
    } else if (event.length > 0) {
      out.enqueue(Buffer.concat(event));
    }
    event = [];
    eventBytes = 0;
    skipped = undefined;
  };
  return new TransformStream({
    transform(chunk, out) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        let text = piece.length;
        if (text > 0 && piece[text - 1] === 0x0a) text--;
        if (text > 0 && piece[text - 1] === 0x0d) text--;
        if (text > 0) lineHasText = true;
        if (skipped !== undefined) skipped += piece.length;
        else if (eventBytes + piece.length > maxBytes) {
          skipped = eventBytes + piece.length;
          event = [];
        } else {
          event.push(piece);
          eventBytes += piece.length;
        }
        if (newline !== -1) {
          // A blank line ends an event.
          if (!lineHasText) endEvent(out);
          lineHasText = false;
        }
        start = end;
      }
    },
    flush(out) {
      endEvent(out);
    },
  });
}
