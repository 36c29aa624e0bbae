import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { BoundedMap } from "./bounded-map.js";
import { openAiErrorBody } from "./errors.js";
import { markEventStream } from "./sse.js";
import { webResponse } from "./http/response.js";

/**
 * `Idempotency-Key` on the OpenAI-compatible POST routes: a client that
 * sends a request again with the same key (an SDK retrying after a timeout)
 * gets the first answer back, replayed (a stream too), instead of a second
 * turn; while the first still runs it gets `409` (with `retry-after`). Keys
 * are kept 10 minutes, at most `maxKeys` of them and `maxBytes` of answers
 * together (the oldest go first). A first request its client left before the
 * answer (nothing was delivered) is forgotten, so the retry runs; an answer
 * too large to keep leaves a marker, and a repeat is told so (`409`) rather
 * than run again. A key sent again with another body is a client's mistake
 * (a key reused for a new request), refused with `422` as the IETF draft on
 * the header asks, rather than answered with another request's answer.
 */

export const IDEMPOTENCY_TTL_MS = 10 * 60_000;
/** The most bytes one kept answer may take; a larger one leaves only its marker. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Each entry keeps a digest of the body it was made for (`fingerprint`): a repeat must send the same bytes. */
type Entry = { fingerprint: string } & ({ state: "running" } | { state: "done"; status: number; contentType: string; body: string } | { state: "too-large" });

export interface IdempotencyLimits {
  maxKeys: number;
  maxBytes: number;
}

export class IdempotencyStore {
  private readonly kept: BoundedMap<Entry>;
  /** gateway.limits.idempotency_keys 0: no key is kept, and the header is not read. */
  readonly off: boolean;

  constructor(limits: IdempotencyLimits, now: () => number = Date.now) {
    this.off = limits.maxKeys === 0;
    // A running entry stays: its request holds it.
    this.kept = new BoundedMap<Entry>({ maxEntries: limits.maxKeys, maxBytes: limits.maxBytes, ttlMs: IDEMPOTENCY_TTL_MS }, now, (e) => e.state === "running");
  }

  get size(): number {
    return this.kept.size;
  }

  get(key: string): Entry | undefined {
    return this.kept.get(key);
  }

  start(key: string, fingerprint: string): void {
    this.kept.set(key, { state: "running", fingerprint });
  }

  finish(key: string, fingerprint: string, status: number, contentType: string, body: string): void {
    const bytes = Buffer.byteLength(body);
    if (bytes > MAX_ANSWER_BYTES) this.tooLarge(key, fingerprint);
    else this.kept.set(key, { state: "done", fingerprint, status, contentType, body }, bytes);
  }

  /** An answer too large to keep: only its marker stays. */
  tooLarge(key: string, fingerprint: string): void {
    this.kept.set(key, { state: "too-large", fingerprint });
  }

  delete(key: string): void {
    this.kept.delete(key);
  }
}

/**
 * Whether an answer is kept for the key's retries: not one that says to try
 * again (429: the session's queue was full; 5xx: the model, the store or
 * the turn's time failed), or a client retrying with the same key, as the
 * OpenAI SDKs do, would be handed the same failure for as long as it is kept.
 */
function keptForRetries(status: number): boolean {
  return status !== 429 && status < 500;
}

/** The middleware of one route: keyed by the route and the client's key. */
export function idempotent(store: IdempotencyStore): MiddlewareHandler {
  return async (c: Context, next) => {
    const given = c.req.header("idempotency-key");
    if (store.off || c.req.method !== "POST" || given === undefined || given.trim() === "") return next();
    if (given.length > 256) {
      return c.json(openAiErrorBody(400, "invalid_request", "Idempotency-Key: at most 256 characters"), 400);
    }
    const key = `${c.req.path}\u0000${given}`;
    // The body's bytes, read from a copy of the request (the route reads the request itself).
    const fingerprint = createHash("sha256")
      .update(new Uint8Array(await c.req.raw.clone().arrayBuffer()))
      .digest("base64");
    const found = store.get(key);
    if (found !== undefined && found.fingerprint !== fingerprint) {
      c.header("x-should-retry", "false");
      return c.json(
        openAiErrorBody(
          422,
          "idempotency_key_reused",
          "this Idempotency-Key came with another request body in the last 10 minutes; a key names one request: send a new key for a new request",
        ),
        422,
      );
    }
    if (found?.state === "running") {
      c.header("retry-after", "1");
      return c.json(openAiErrorBody(409, "idempotency_conflict", "a request with this Idempotency-Key is still being answered; try again shortly"), 409);
    }
    if (found?.state === "too-large") {
      c.header("x-should-retry", "false");
      return c.json(
        openAiErrorBody(409, "idempotency_conflict", "a request with this Idempotency-Key was answered already; its answer was too large to keep"),
        409,
      );
    }
    if (found?.state === "done") {
      // A streamed answer replayed is an event stream too, counted while it is sent.
      if (found.contentType.startsWith("text/event-stream")) markEventStream(c);
      return webResponse(found.body, { status: found.status, headers: { "content-type": found.contentType, "idempotent-replayed": "true" } });
    }
    store.start(key, fingerprint);
    const signal = c.req.raw.signal;
    try {
      await next();
    } catch (error) {
      store.delete(key);
      throw error;
    }
    const res = c.res;
    const contentType = res.headers.get("content-type") ?? "application/json";
    if (!res.body || !contentType.startsWith("text/event-stream")) {
      if (signal.aborted || !keptForRetries(res.status)) store.delete(key);
      else store.finish(key, fingerprint, res.status, contentType, await res.clone().text());
      return;
    }
    // A stream: copied as it is sent (at the client's pace), kept once it ended whole; one its client left is forgotten (it may run again).
    let finished = false;
    const forget = () => {
      if (!finished) store.delete(key);
    };
    signal.addEventListener("abort", forget, { once: true });
    const decoder = new TextDecoder();
    let kept: string[] = [];
    let size = 0;
    const copy = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > MAX_ANSWER_BYTES) kept = [];
        else kept.push(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
      flush() {
        finished = true;
        signal.removeEventListener("abort", forget);
        if (signal.aborted) store.delete(key);
        else if (size > MAX_ANSWER_BYTES) store.tooLarge(key, fingerprint);
        else store.finish(key, fingerprint, res.status, contentType, kept.join("") + decoder.decode());
      },
    });
    c.res = webResponse(res.body.pipeThrough(copy), { status: res.status, headers: res.headers });
  };
}
