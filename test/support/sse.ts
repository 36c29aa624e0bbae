import { createParser } from "eventsource-parser";
import { within } from "./wait.js";

export interface SseEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: event JSON
  data: any;
}

/**
 * Reads Server-Sent Events from a response body as they arrive. `next()`
 * resolves with the next event (waiting up to a wait's deadline, then
 * failing with the events so far); `close()` cancels the stream, as a
 * client that goes away would. `ids` holds each event's `id:` (undefined
 * for one without), `lastId` the last one given (what a client sends back
 * as `Last-Event-ID`).
 */
export function sseReader(response: Response) {
  const events: SseEvent[] = [];
  const ids: (string | undefined)[] = [];
  let lastId: string | undefined;
  let waiting: (() => void) | undefined;
  const parser = createParser({
    onEvent: (e) => {
      events.push({ event: e.event ?? "message", data: JSON.parse(e.data) });
      ids.push(e.id);
      if (e.id !== undefined) lastId = e.id;
      waiting?.();
    },
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let done = false;
  const pump = (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
    } catch {
      // cancelled
    } finally {
      done = true;
      waiting?.();
    }
  })();
  let read = 0;
  const take = async (): Promise<SseEvent> => {
    while (read >= events.length) {
      if (done) throw new Error(`the stream ended; events so far: ${JSON.stringify(events)}`);
      await new Promise<void>((resolve) => (waiting = resolve));
    }
    return events[read++]!;
  };
  const sofar = { instead: () => `events so far: ${JSON.stringify(events)}` };
  return {
    events,
    ids,
    /** The last event id given so far. */
    get lastId(): string | undefined {
      return lastId;
    },
    /** The id of the last event `next` or `until` handed out. */
    get readId(): string | undefined {
      return ids.slice(0, read).findLast((id) => id !== undefined);
    },
    next(): Promise<SseEvent> {
      return within(`the stream's next event (event ${read + 1})`, take(), sofar);
    },
    /** Events until (and including) the first of the given type. */
    until(type: string): Promise<SseEvent[]> {
      const seen: SseEvent[] = [];
      const found = async () => {
        for (;;) {
          const event = await take();
          seen.push(event);
          if (event.event === type) return seen;
        }
      };
      return within(`a "${type}" event on the stream`, found(), sofar);
    },
    async close(): Promise<void> {
      await reader.cancel().catch(() => {});
      await pump;
    },
    get ended(): boolean {
      return done;
    },
  };
}
