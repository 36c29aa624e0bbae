import { formatBytes } from "../../bytes.js";

/**
 * A stream's output kept within a bound however much comes: its first
 * `limit / 2` bytes and its last `limit / 2`, with the count of what was
 * between (a command that prints 1 GB holds `limit` bytes here, and the
 * model sees how it began and how it ended).
 */
export class OutputBuffer {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(limit: number) {
    this.headLimit = Math.ceil(limit / 2);
    this.tailLimit = Math.floor(limit / 2);
  }

  get bytes(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const taken = rest.subarray(0, this.headLimit - this.headBytes);
      this.head.push(Buffer.from(taken));
      this.headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail =
      rest.length >= this.tailLimit ? Buffer.from(rest.subarray(rest.length - this.tailLimit)) : keepLast(Buffer.concat([this.tail, rest]), this.tailLimit);
  }

  /** The text kept: all of it, or the start, a line saying how much was cut, and the end. */
  text(): string {
    const head = Buffer.concat(this.head);
    const cut = this.total - head.length - this.tail.length;
    if (cut === 0) return Buffer.concat([head, this.tail]).toString("utf8");
    return `${decodeStart(head)}\n... (${formatBytes(cut)} of output cut here; ${formatBytes(this.total)} in all) ...\n${decodeEnd(this.tail)}`;
  }
}

const keepLast = (buffer: Buffer, limit: number) => (buffer.length > limit ? buffer.subarray(buffer.length - limit) : buffer);

/** The bytes as text, without a character cut at the end. */
function decodeStart(bytes: Buffer): string {
  let end = bytes.length;
  // Back over a character begun but not finished.
  for (let i = end - 1, seen = 0; i >= 0 && seen < 4; i--, seen++) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (end - i < needs) end = i;
    break;
  }
  return bytes.subarray(0, end).toString("utf8");
}

/** The bytes as text, without a character cut at the start. */
function decodeEnd(bytes: Buffer): string {
  let start = 0;
  while (start < bytes.length && start < 4 && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString("utf8");
}
