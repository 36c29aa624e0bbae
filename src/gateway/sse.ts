import type { Context } from "hono";
import { AbortedError } from "../errors.js";
import type { Timer } from "../signals.js";
import type { SessionItem } from "../port/feature.js";
import type { NodeBindings } from "./http/node-listener.js";

/** How long a streamed answer may stay quiet before a comment line keeps proxies from cutting it. */
export const HEARTBEAT_MS = 15_000;

/**
 * What a streamed answer may hold that its client has not taken yet, by
 * default (UTF-8 bytes; gateway.limits.stream_queue_bytes). A client that
 * stops reading fills it; then the answer is cut and its turn aborted, as
 * when a client leaves.
 */
export const ANSWER_QUEUE_BYTES = 8 * 1024 * 1024;

export interface SseOptions {
  /** Times the heartbeats (tests run them out themselves). */
  timer: Timer;
  /** What the answer may hold unread (one frame of any size fits an empty queue). */
  maxQueuedBytes: number;
}

/** The requests answered with an event stream (SseAnswer, the session events route); what the metrics count while open. */
const eventStreams = new WeakSet<Context>();

/** Says `c` is answered with an event stream (the metrics count its body while it is open). */
export function markEventStream(c: Context): void {
  eventStreams.add(c);
}

/** `c`'s answer: `body` as an event stream, marked so. */
export function eventStreamAnswer(c: Context, body: ReadableStream<Uint8Array>, headers: Record<string, string>): Response {
  markEventStream(c);
  return c.body(body, 200, { ...headers, "content-type": "text/event-stream" });
}

/** Whether `c` was answered with an event stream: asked of every request, without touching its answer. */
export function answeredWithEventStream(c: Context): boolean {
  return eventStreams.has(c);
}

/** The node response under the request when the node server serves it (the node listener puts it in `c.env`). */
export function nodeResponse(c: Context): { destroy(): void } | undefined {
  return (c.env as Partial<NodeBindings> | undefined)?.outgoing;
}

/**
 * Calls `gone` when the client of a stream sends its FIN. The server keeps
 * half-closed connections open (a client done sending still reads its
 * answer: server.ts), but a stream's client sends nothing after its request,
 * so its FIN means it left: the work behind the stream stops at once, not at
 * the next write. Returns what stops listening.
 */
export function onClientFin(c: Context, gone: () => void): () => void {
  const socket = (c.env as Partial<NodeBindings> | undefined)?.incoming?.socket;
  if (!socket) return () => {};
  if (socket.readableEnded) {
    queueMicrotask(gone);
    return () => {};
  }
  socket.once("end", gone);
  return () => socket.off("end", gone);
}

/**
 * A Server-Sent Events answer written as its events happen (a streamed
 * turn): frames queue until the connection takes them, all that is queued
 * going out at once; a comment line (`: ping`) goes out whenever
 * HEARTBEAT_MS pass with nothing written. `signal` aborts when the client
 * leaves or stops reading (its queue over `maxQueuedBytes`): the work
 * behind the answer stops with it. After `end`, nothing more is written.
 */
export class SseAnswer {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private ended = false;
  private wrote = false;
  private wake: (() => void) | undefined;
  private readonly gone = new AbortController();
  private stopHeartbeat: () => void = () => {};
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Stops listening for the client's FIN: once the answer is done, however it ends (a kept-alive socket outlives it). */
  private stopListening: () => void = () => {};
  private readonly encoder = new TextEncoder();
  readonly body: ReadableStream<Uint8Array>;

  constructor(
    private readonly c: Context,
    private readonly opts: SseOptions,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          this.beat();
          this.stopListening = onClientFin(c, () => this.leave(new AbortedError("the client went away")));
          this.gone.signal.addEventListener("abort", () => this.stopListening(), { once: true });
        },
        pull: async (controller) => {
          while (this.queue.length === 0 && !this.ended && !this.gone.signal.aborted) {
            await new Promise<void>((resolve) => (this.wake = resolve));
          }
          // A client that left (its FIN) gets the answer's end: returning without it left the response open for good, its
          // socket half-closed on the server's side and counted as an open stream.
          if (this.gone.signal.aborted) {
            this.stopListening();
            return closeQuietly(controller);
          }
          if (this.queue.length > 0) {
            const text = this.queue.length === 1 ? this.queue[0]! : this.queue.join("");
            this.queue.length = 0;
            this.queuedBytes = 0;
            controller.enqueue(this.encoder.encode(text));
            return;
          }
          this.stopHeartbeat();
          this.stopListening();
          controller.close();
        },
        cancel: () => {
          this.stopListening();
          this.leave(new AbortedError("the client went away"));
        },
      },
      // Nothing is pulled ahead of the connection: what the client has not taken stays in the queue, counted.
      { highWaterMark: 0 },
    );
  }

  /** Aborts when the client went away or stopped reading. */
  get signal(): AbortSignal {
    return this.gone.signal;
  }

  /** The answer to return from the route. */
  response(): Response {
    // Not Connection: Node sets it from the request (a client's `Connection: close` is honoured).
    return eventStreamAnswer(this.c, this.body, {
      "cache-control": "no-cache",
      // Proxies that buffer answers (nginx) pass this one on as it comes.
      "x-accel-buffering": "no",
    });
  }

  /** Queues one frame (`event: ...\ndata: ...\n\n`, or `data: ...\n\n`). */
  send(frame: string): void {
    if (this.ended || this.gone.signal.aborted) return;
    const bytes = Buffer.byteLength(frame, "utf8");
    if (this.queue.length > 0 && this.queuedBytes + bytes > this.opts.maxQueuedBytes) {
      this.cut();
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += bytes;
    this.wrote = true;
    this.wake?.();
  }

  /** Queues the last frame; the answer ends once it is written. */
  end(frame?: string): void {
    if (frame !== undefined) this.send(frame);
    this.ended = true;
    this.stopHeartbeat();
    this.wake?.();
  }

  /** A comment line when HEARTBEAT_MS passed with nothing written, then again. */
  private beat(): void {
    this.stopHeartbeat = this.opts.timer(HEARTBEAT_MS, () => {
      if (this.ended || this.gone.signal.aborted) return;
      if (!this.wrote && this.queue.length === 0) this.send(": ping\n\n");
      this.wrote = false;
      this.beat();
    });
  }

  /** The client stopped reading: cut the connection and stop the work. */
  private cut(): void {
    this.leave(new AbortedError("the client stopped reading the streamed answer"));
    // On the node server, its socket (quietly); in-process, the body errors.
    const socket = nodeResponse(this.c);
    if (socket) socket.destroy();
    else this.controller?.error(new Error("the client stopped reading the streamed answer"));
  }

  private leave(reason: AbortedError): void {
    if (this.gone.signal.aborted) return;
    this.stopHeartbeat();
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.gone.abort(reason);
    this.wake?.();
  }
}

/** Ends a stream's body; one its reader cancelled is closed already. */
function closeQuietly(controller: ReadableStreamDefaultController<Uint8Array>): void {
  try {
    controller.close();
  } catch {
    // cancelled by its reader: nothing to end
  }
}

/** One SSE event (JSON data holds no line breaks; an event name must not either). */
export function sseEvent(event: string, data: unknown): string {
  return `event: ${event.replace(/[\r\n]/g, "")}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** What reaches a session outside a request (a delivery or a feature's notice) as an SSE event: no session keys, no internal text. */
export function sessionItemEvent(item: SessionItem): string {
  return item.type === "notice" ? sseEvent(item.event, item.data) : sseEvent("delivery", { from: item.from, text: item.text });
}
