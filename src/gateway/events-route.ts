import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { OutboxItem } from "../runtime/outbox.js";
import type { Runtime } from "../runtime/runtime.js";
import { joinSignals } from "../signals.js";

export const HEARTBEAT_MS = 15_000;

/** The SSE event a user-facing outbox item becomes (no session keys, no internal text). */
export function sseOf(item: OutboxItem): { event: string; data: string } {
  if (item.type === "notice") return { event: item.event, data: JSON.stringify(item.data) };
  return { event: "delivery", data: JSON.stringify({ from: item.from, text: item.text }) };
}

/**
 * `GET /v1/sessions/<key>/events`: a Server-Sent Events stream of what is
 * delivered to the session (`delivery` events `{"from","text"}`) and of its
 * subagents starting and ending. Deliveries kept while no stream was open
 * come first. The stream ends when the client leaves or the gateway stops.
 */
export function eventsStream(c: Context, runtime: Runtime, sessionKey: string): Response {
  return streamSSE(c, async (stream) => {
    const queue: OutboxItem[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = runtime.subscribe(sessionKey, (item) => {
      queue.push(item);
      wake?.();
    });
    const joined = joinSignals([c.req.raw.signal, runtime.shutdownSignal]);
    const ended = joined.signal;
    const stop = () => wake?.();
    ended.addEventListener("abort", stop);
    stream.onAbort(stop);
    try {
      await stream.write(": connected\n\n");
      while (!ended.aborted && !stream.aborted) {
        while (queue.length > 0) await stream.writeSSE(sseOf(queue.shift()!));
        const idle = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), HEARTBEAT_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
        if (idle && !ended.aborted) await stream.write(": ping\n\n");
      }
    } finally {
      unsubscribe();
      ended.removeEventListener("abort", stop);
      joined.dispose();
    }
  });
}
