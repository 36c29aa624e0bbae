import { type EventSourceMessage, createParser } from "eventsource-parser";
import type { AnswerBody, ModelAnswer } from "./exchange.js";
import { cutToBytes } from "../bytes.js";

/**
 * Reading an HTTP answer body piece by piece: as text (UTF-8 decoded across
 * chunk borders, so a character split between two chunks stays whole) or as
 * server-sent events (parsed by eventsource-parser, so an event split in the
 * middle of a JSON value is joined before it is handed on). Both are bounded:
 * nothing a server sends is held beyond a fixed number of bytes.
 */

/** Called on every piece of real data received, so an idle timer can start again. */
export type Activity = () => void;

/** The answer's body failed while it was being read (the connection broke): `cause` says how. */
export class BrokenBody extends Error {
  constructor(cause: unknown) {
    super("the answer's body broke off", { cause });
  }
}

/** Whether the answer is a server-sent event stream (otherwise it is read as one JSON document). */
export function isEventStream(answer: ModelAnswer): boolean {
  return (answer.header("content-type") ?? "").toLowerCase().includes("text/event-stream");
}

/**
 * Feeds every chunk (its decoded text and its size in bytes) to `onChunk`
 * until the body ends or `onChunk` returns true (stop).
 */
async function readChunks(body: AnswerBody, onChunk: (text: string, bytes: number) => boolean | undefined): Promise<void> {
  const chunks = body[Symbol.asyncIterator]();
  const decoder = new TextDecoder("utf-8");
  let done = false;
  try {
    for (;;) {
      let chunk: IteratorResult<Uint8Array>;
      try {
        chunk = await chunks.next();
      } catch (error) {
        throw new BrokenBody(error);
      }
      if (chunk.done) {
        done = true;
        const rest = decoder.decode();
        if (rest) onChunk(rest, 0);
        return;
      }
      if (onChunk(decoder.decode(chunk.value, { stream: true }), chunk.value.byteLength) === true) {
        // Stopped (a terminal event, a limit). A server usually ends the body with its last event:
        // reading that end, when it has already arrived, keeps the connection for the next request,
        // where stopping before it would close it. Nothing read past the stop is handed on.
        done = await endsNow(chunks);
        return;
      }
    }
  } finally {
    // Stopping early (a terminal event, a limit, an error thrown by a handler) closes the connection.
    if (!done) body.destroy();
  }
}

/** Whether the body's end has already arrived: its next read says done before anything else is due (no waiting on the network). */
async function endsNow(chunks: AsyncIterator<Uint8Array>): Promise<boolean> {
  let check: ReturnType<typeof setImmediate> | undefined;
  const next = chunks.next().then(
    (chunk) => chunk.done === true,
    () => false,
  );
  const notYet = new Promise<boolean>((resolve) => (check = setImmediate(() => resolve(false))));
  const ended = await Promise.race([next, notYet]);
  clearImmediate(check);
  return ended;
}

/**
 * The body as text, at most `maxBytes` of it: reading stops there and the
 * connection is closed (`complete` is then false). Every chunk is activity.
 */
export async function readText(body: AnswerBody, activity: Activity, maxBytes: number): Promise<{ text: string; complete: boolean }> {
  const parts: string[] = [];
  let bytes = 0;
  let complete = true;
  await readChunks(body, (text, size) => {
    activity();
    bytes += size;
    parts.push(text);
    if (bytes > maxBytes) complete = false;
    return !complete;
  });
  const text = parts.join("");
  // Only the first maxBytes count: cut by characters, which never splits one.
  return { text: complete ? text : cutToBytes(text, maxBytes), complete };
}

/**
 * Hands every event of an SSE body to `onEvent`, in order, until the body
 * ends or `onEvent` returns true (a terminal event such as `[DONE]`). An
 * error thrown by `onEvent` stops reading and closes the connection.
 * Comment lines (`: keep-alive`) are no events and are not handed on. A
 * server that sends more than `maxPendingBytes` without completing an event
 * (one event that never ends, a flood of comments) fails with `tooLarge()`.
 */
export async function readEvents(
  body: AnswerBody,
  onEvent: (event: EventSourceMessage) => boolean | undefined,
  limit: { maxPendingBytes: number; tooLarge: () => Error },
): Promise<void> {
  let stop = false;
  let pending = 0;
  const parser = createParser({
    onEvent: (event) => {
      pending = 0;
      if (!stop && onEvent(event) === true) stop = true;
    },
  });
  await readChunks(body, (text, bytes) => {
    pending += bytes;
    parser.feed(text);
    if (!stop && pending > limit.maxPendingBytes) throw limit.tooLarge();
    return stop;
  });
  // A last event without its closing blank line still counts.
  if (!stop) parser.feed("\n\n");
}
