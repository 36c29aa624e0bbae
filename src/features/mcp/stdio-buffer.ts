import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { idOf, tooLargeError } from "./message-size.js";

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
