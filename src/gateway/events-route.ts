import type { Context } from "hono";
import type { Runtime } from "../runtime/runtime.js";
import { PicoclawError, RequestError } from "../errors.js";
import { quoted } from "../validation.js";
import { joinSignals } from "../signals.js";
import { HEARTBEAT_MS, eventStreamAnswer, nodeResponse, onClientFin, sessionItemEvent, sseEvent } from "./sse.js";
import { StreamSlots } from "./stream-slots.js";
import { carriesBody, refuse } from "./refusal.js";

/** No cap (an embedder's app without limits): a slot is always there. */
const UNBOUNDED = new StreamSlots(Number.POSITIVE_INFINITY);

/**
 * An event stream's headers (and content type, text/event-stream). Not Connection or Transfer-Encoding: Node sets
 * those from the request (a client's `Connection: close` is honoured, an HTTP/1.0 client gets no chunks).
 */
const STREAM_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-cache",
  // A proxy that buffers answers (nginx) passes this stream on as it comes, whatever its own config says.
  "x-accel-buffering": "no",
};

/** The last event of a stream the gateway ends because it is stopping. */
const SHUTDOWN_EVENT = sseEvent("shutdown", { reason: "the gateway is shutting down" });

/** An event id as the outbox gives them: decimal digits (at most 19: a bigint), and a dot and digits for one sent while the database was down. */
const EVENT_ID = /^(0|[1-9][0-9]{0,18})(\.[0-9]{1,15})?$/;

/** The `Last-Event-ID` a client sent when it comes back, checked; undefined when it sent none. */
export function lastEventId(c: Context): string | undefined {
  const raw = c.req.header("last-event-id");
  if (raw === undefined || raw.trim() === "") return undefined;
  const id = raw.trim();
  if (!EVENT_ID.test(id)) {
    throw new RequestError("invalid_request", `Last-Event-ID: expected the id of an event of this stream (digits), got ${quoted(id, 40)}`);
  }
  return id;
}

/** An event with its id line first: the client sends the last one back as `Last-Event-ID` when it reconnects. */
function withId(id: string | undefined, event: string): string {
  return id === undefined ? event : `id: ${id}\n${event}`;
}

/**
 * `GET /v1/sessions/<key>/events`: a Server-Sent Events stream of what is
 * delivered to the session (`delivery` events `{"from","text"}`) and of its
 * notices: its turns starting and ending, its plan changing, its subagents
 * starting and ending. Deliveries kept while no stream was open come first.
 * Every event carries its id (`id:`); a client that comes back with the
 * last one it got (`Last-Event-ID`) is handed what it missed first, from
 * the session's replay (whichever stream took it meanwhile).
 *
 * The stream is pulled: an item leaves the session's queue for this stream
 * only when the connection can take it, so a client that stops reading
 * fills the queue (bounded, `STREAM_QUEUE`); then the stream is cut and its
 * deliveries are kept for the session. It ends when the client leaves, or,
 * when the gateway stops, after what was queued and a `shutdown` event.
 */
export async function eventsStream(c: Context, runtime: Runtime, sessionKey: string, slots: StreamSlots = UNBOUNDED): Promise<Response> {
  // A slot first: past the cap, a clear 503, and nothing is subscribed.
  // (A bad Last-Event-ID is a 400 before that: nothing is taken.)
  const after = lastEventId(c);
  // A GET with a body is refused: the node server reads no GET's body, so a large one left the socket paused, and the
  // client's leaving (its FIN, behind the unread bytes) unseen: its stream slot stayed taken until request_timeout_ms.
  if (carriesBody(c)) return refuse(c, 400, "invalid_request", "GET .../events takes no request body");
  const tooMany = () =>
    new PicoclawError(`${slots.max} event streams are open (gateway.limits.max_streams); close one, or try again later`, {
      code: "too_many_streams",
      fault: "system",
    });
  // A HEAD gets what a GET would (its status and headers), and no stream: hono answers it with the GET's answer's body
  // dropped, neither read nor cancelled, so a stream made for it kept its slot and its subscription for good (five HEADs
  // filled max_streams 5).
  if (c.req.method === "HEAD") {
    if (slots.size >= slots.max) throw tooMany();
    return c.body(null, 200, { ...STREAM_HEADERS, "content-type": "text/event-stream" });
  }
  if (!slots.take()) throw tooMany();
  const subscription = runtime.subscribe(sessionKey, after === undefined ? {} : { after });
  // A shared outbox tells the other gateways of the stream first (bounded): what they send once it is open is not missed.
  if (subscription.ready) await subscription.ready;
  const encoder = new TextEncoder();
  const ended = joinSignals([c.req.raw.signal, runtime.shutdownSignal]);
  // The gateway stopping lets the stream say goodbye; a client that left gets nothing more.
  const onEnd = () => (runtime.shutdownSignal.aborted ? subscription.finish() : subscription.close());
  let done = false;
  // A reader's FIN is its leaving (it sends nothing on an event stream): the subscription goes at once.
  const stopFin = onClientFin(c, () => {
    if (!done) onEnd();
  });
  const finish = () => {
    if (!done) slots.give();
    done = true;
    stopFin();
    ended.signal.removeEventListener("abort", onEnd);
    ended.dispose();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        subscription.onOverflow = () => {
          if (done) return;
          finish();
          // Cut the connection: on the node server, its socket (quietly); in-process, the body errors.
          const socket = nodeResponse(c);
          if (socket) socket.destroy();
          else controller.error(new Error("the client stopped reading the event stream"));
        };
        controller.enqueue(encoder.encode(": connected\n\n"));
      },
      async pull(controller) {
        for (;;) {
          if (done) return;
          const item = subscription.take();
          if (item) return controller.enqueue(encoder.encode(withId(subscription.lastId, sessionItemEvent(item))));
          if (subscription.ended) {
            const goodbye = subscription.finished;
            finish();
            // The goodbye repeats the last id: a client that comes back after the restart resumes from it.
            if (goodbye) controller.enqueue(encoder.encode(withId(subscription.lastId ?? after, SHUTDOWN_EVENT)));
            return controller.close();
          }
          let timer: NodeJS.Timeout | undefined;
          const idle = await Promise.race([
            subscription.changed().then(() => false),
            new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), HEARTBEAT_MS))),
          ]);
          clearTimeout(timer);
          if (idle && !done) return controller.enqueue(encoder.encode(": ping\n\n"));
        }
      },
      cancel() {
        finish();
        subscription.close();
      },
    },
    // Nothing is pulled ahead of the connection: what the client has not taken stays in the queue.
    { highWaterMark: 0 },
  );
  if (ended.signal.aborted) onEnd();
  else ended.signal.addEventListener("abort", onEnd, { once: true });

  return eventStreamAnswer(c, body, STREAM_HEADERS);
}
