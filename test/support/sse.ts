import { createParser } from "eventsource-parser";

export interface SseEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: event JSON
  data: any;
}

/**
 * Reads Server-Sent Events from a response body as they arrive. `next()`
 * resolves with the next event (waiting as long as it takes); `close()`
 * cancels the stream, as a client that goes away would.
 */
export function sseReader(response: Response) {
  const events: SseEvent[] = [];
  let waiting: (() => void) | undefined;
  const parser = createParser({
    onEvent: (e) => {
      events.push({ event: e.event ?? "message", data: JSON.parse(e.data) });
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
  return {
    events,
    async next(): Promise<SseEvent> {
      while (read >= events.length) {
        if (done) throw new Error(`the stream ended; events so far: ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => (waiting = resolve));
      }
      return events[read++]!;
    },
    /** Events until (and including) the first of the given type. */
    async until(type: string): Promise<SseEvent[]> {
      const seen: SseEvent[] = [];
      for (;;) {
        const event = await this.next();
        seen.push(event);
        if (event.event === type) return seen;
      }
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
