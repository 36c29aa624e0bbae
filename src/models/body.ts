import { type EventSourceMessage, createParser } from "eventsource-parser";

/**
 * Reading an HTTP answer body piece by piece: as text (UTF-8 decoded across
 * chunk borders, so a character split between two chunks stays whole) or as
 * server-sent events (parsed by eventsource-parser, so an event split in the
 * middle of a JSON value is joined before it is handed on).
 */

/** Called on every chunk received, so an idle timer can start again. */
export type Activity = () => void;

/** Whether the answer is a server-sent event stream (otherwise it is read as one JSON document). */
export function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream");
}

/** Feeds decoded text to `onText` until the body ends or `onText` returns true (stop). */
async function readDecoded(body: ReadableStream<Uint8Array> | null, activity: Activity, onText: (text: string) => boolean | undefined): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      activity();
      if (chunk.done) {
        done = true;
        const rest = decoder.decode();
        if (rest) onText(rest);
        return;
      }
      if (onText(decoder.decode(chunk.value, { stream: true })) === true) return;
    }
  } finally {
    // Stopping early (a terminal event, an error thrown by a handler) closes the connection.
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The whole body as text. */
export async function readText(body: ReadableStream<Uint8Array> | null, activity: Activity): Promise<string> {
  const parts: string[] = [];
  await readDecoded(body, activity, (text) => {
    parts.push(text);
    return false;
  });
  return parts.join("");
}

/**
 * Hands every event of an SSE body to `onEvent`, in order, until the body
 * ends or `onEvent` returns true (a terminal event such as `[DONE]`). An
 * error thrown by `onEvent` stops reading and closes the connection.
 */
export async function readEvents(
  body: ReadableStream<Uint8Array> | null,
  activity: Activity,
  onEvent: (event: EventSourceMessage) => boolean | undefined,
): Promise<void> {
  let stop = false;
  const parser = createParser({
    onEvent: (event) => {
      if (!stop && onEvent(event) === true) stop = true;
    },
  });
  await readDecoded(body, activity, (text) => {
    parser.feed(text);
    return stop;
  });
  // A last event without its closing blank line still counts.
  if (!stop) parser.feed("\n\n");
}
