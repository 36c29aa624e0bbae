import type { ChatMessage } from "../../models/message.js";
import { messageProblem, parseTranscript, repairToolPairs } from "./transcript.js";

/** A history file open for reading at any place (session-files.ts opens one; tests give their own, counting what is read). */
export interface TailFile {
  /** Its size in bytes when it was opened. */
  readonly size: number;
  /** `length` bytes from `position` (fewer only at the end). */
  read(position: number, length: number): Promise<Uint8Array>;
}

/** The first read from the end; each further one reads twice as much, at most MAX_CHUNK. */
export const FIRST_CHUNK = 64 * 1024;
const MAX_CHUNK = 4 * 1024 * 1024;

/** What the session keeps of messages read back (its limits applied), and whether the limits left anything out. */
export type Bound = (messages: ChatMessage[]) => { messages: ChatMessage[]; trimmed: boolean };

export interface TailOptions {
  /** The file's name, for what the read-back says of it. */
  fileName: string;
  /** The session's limits. */
  bound: Bound;
  /** The first read's size (default FIRST_CHUNK). */
  firstChunk?: number;
}

export interface HistoryTail {
  /** The end of what the session keeps: at least the `limit` asked for, when it holds that many. */
  messages: ChatMessage[];
  /**
   * Whether `messages` is all the session keeps (the file was read from its
   * start, or the limits dropped its older part as they would from all of
   * it): then their number is the session's total.
   */
  whole: boolean;
  /** Bytes read. */
  bytesRead: number;
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder("utf-8");

/**
 * The last `limit` messages (at least) of a session's history file, read
 * from its end: backwards in chunks until the lines from some user message
 * on hold `limit` messages once read back, so the bytes read are those of
 * the last exchanges, not the file. From a user message on, a file reads
 * back exactly as it does whole: damaged lines are skipped, a torn end is
 * handled as `parseTranscript` does (its turn is in the part read, which
 * starts before the last user message), tool calls are paired again
 * (`repairToolPairs` starts afresh at any message that is no tool result),
 * and the session's limits drop the oldest exchanges (`bound`), whole. So
 * the messages returned are the end of what a whole read would give.
 */
export async function readHistoryTail(file: TailFile, limit: number, opts: TailOptions): Promise<HistoryTail> {
  const { fileName, bound } = opts;
  let start = file.size;
  let bytesRead = 0;
  let chunk = opts.firstChunk ?? FIRST_CHUNK;
  /** What was read, from `start` to the end. */
  let buffer: Uint8Array = new Uint8Array(0);
  /** Where the complete lines read so far begin (absolute offsets), earliest first, with whether each is a user message. */
  let lines: { offset: number; user: boolean; message: boolean }[] = [];
  /** Where the complete lines scanned so far begin: the first byte after a line break (or the file's start). */
  let scannedFrom = file.size;
  /** The earliest user message tried as the start (later ones are not tried again), and the messages the next try needs from its start on. */
  let tried = Number.POSITIVE_INFINITY;
  let needed = limit;
  for (;;) {
    const from = Math.max(0, start - chunk);
    const part = await file.read(from, start - from);
    bytesRead += part.length;
    buffer = concat(part, buffer);
    start = from;
    chunk = Math.min(MAX_CHUNK, chunk * 2);
    if (start === 0) {
      // The whole file: read back as a whole read does (a byte-order mark, a first line that is no user message).
      return { messages: readBack(decoder.decode(buffer), fileName, bound).messages, whole: true, bytesRead };
    }
    // The lines begun since the last read: from the first line break in it, up to where the scanned lines begin.
    const firstBreak = buffer.indexOf(NEWLINE);
    if (firstBreak < 0 || start + firstBreak + 1 >= scannedFrom) continue;
    const fresh = scanLines(buffer, firstBreak + 1, scannedFrom - start, start);
    lines = [...fresh, ...lines];
    scannedFrom = start + firstBreak + 1;
    // The latest user message with enough messages from it on (at least `limit`), then earlier ones; each tried once.
    let after = 0;
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i]!;
      if (line.message) after++;
      if (!line.user || after < needed || line.offset >= tried) continue;
      tried = line.offset;
      const back = readBack(decoder.decode(buffer.subarray(line.offset - start)), fileName, bound);
      if (back.messages.length >= limit || back.trimmed) return { messages: back.messages, whole: back.trimmed, bytesRead };
      // Repairs left fewer than `limit` (a torn last turn left out, results without their call): the next try needs that many more lines.
      needed = after + (limit - back.messages.length);
    }
  }
}

/** Messages of a file's text from a line on, repaired and within the session's limits. */
function readBack(text: string, file: string, bound: Bound): { messages: ChatMessage[]; trimmed: boolean } {
  return bound(repairToolPairs(parseTranscript(text, file).messages, file).messages);
}

/** The complete lines in `buffer[from, to)` (`to` is a line's start, or the end of what was read): where each begins, and whether it is a (user) message. */
function scanLines(buffer: Uint8Array, from: number, to: number, base: number): { offset: number; user: boolean; message: boolean }[] {
  const found: { offset: number; user: boolean; message: boolean }[] = [];
  let at = from;
  while (at < to) {
    let stop = buffer.indexOf(NEWLINE, at);
    // The last line read may have no break yet (the file's torn end): it is no line to start at.
    if (stop < 0 || stop >= buffer.length) break;
    if (stop > to) stop = to;
    const kind = lineKind(buffer.subarray(at, stop));
    if (kind !== "blank") found.push({ offset: base + at, user: kind === "user", message: kind !== "other" });
    at = stop + 1;
  }
  return found;
}

/** What a line is: a user message (a window may start there), another message, a line that is none, or blank. */
function lineKind(bytes: Uint8Array): "user" | "message" | "other" | "blank" {
  if (bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0)) return "blank";
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    return "other";
  }
  if (messageProblem(value) !== undefined) return "other";
  return (value as ChatMessage).role === "user" ? "user" : "message";
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
