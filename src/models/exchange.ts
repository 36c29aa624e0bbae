import { EventEmitter } from "node:events";
import type { Dispatcher } from "undici";

/**
 * One POST to a model server and its answer, as the transport and the
 * answer readers see it: a status, headers, and a body read chunk by chunk.
 * In production it is undici's `request` on one pool of kept-alive
 * connections (no Request, Response or web stream objects, and no
 * AbortSignal made per call); tests may inject a `fetch` instead.
 */

/** A model server's answer. */
export interface ModelAnswer {
  readonly status: number;
  /** A response header by its lower-case name. */
  header(name: string): string | undefined;
  readonly body: AnswerBody;
}

/** An answer's body, in chunks as they arrive. */
export interface AnswerBody {
  [Symbol.asyncIterator](): AsyncIterator<Uint8Array>;
  /** Stops reading: a pending read ends, and a connection whose answer has not fully arrived is closed. */
  destroy(): void;
}

/** Why an attempt was stopped before its answer was read. */
export type CutCause = "turn" | "max_duration" | "request_timeout";

/**
 * What stops one attempt: the turn's abort, max_duration or request_timeout.
 * undici's `request` takes an EventEmitter with `aborted` and `reason` as
 * its signal, so stopping costs no AbortController and no DOMException.
 */
export class Cutoff extends EventEmitter {
  aborted = false;
  reason: Error | undefined;
  cause: CutCause | undefined;

  cut(cause: CutCause, reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.cause = cause;
    this.reason = reason;
    this.emit("abort");
  }
}

/** Sends the request; resolves when the answer's status and headers have arrived. */
export type Exchange = (url: string, headers: Record<string, string>, body: string, cutoff: Cutoff) => Promise<ModelAnswer>;

/**
 * The connections to model servers: at most MODEL_CONNECTIONS.perOrigin at
 * once to one server (a call beyond that waits for one to come free, its
 * request_timeout running), an idle one kept `keepAliveMs` (less when the
 * server says so). undici's own header and body timeouts are off: the
 * entry's request_timeout and max_duration are the limits.
 */
export const MODEL_CONNECTIONS = { perOrigin: 256, keepAliveMs: 4_000, keepAliveMaxMs: 60_000, maxRedirections: 20 } as const;

let ready: Dispatcher | undefined;
let loading: Promise<Dispatcher> | undefined;

/** The pool, made with the first call: undici is loaded only by a gateway that calls an HTTP model. */
function pool(): Dispatcher | Promise<Dispatcher> {
  if (ready) return ready;
  loading ??= import("undici").then((loaded) => {
    // undici is CommonJS: its exports are the namespace's `default`, whether Node loads it or the bundle holds it (scripts/build.mjs).
    const { Agent, interceptors } = (loaded.default ?? loaded) as unknown as typeof loaded;
    ready = new Agent({
      connections: MODEL_CONNECTIONS.perOrigin,
      keepAliveTimeout: MODEL_CONNECTIONS.keepAliveMs,
      keepAliveMaxTimeout: MODEL_CONNECTIONS.keepAliveMaxMs,
      headersTimeout: 0,
      bodyTimeout: 0,
    }).compose(interceptors.redirect({ maxRedirections: MODEL_CONNECTIONS.maxRedirections }));
    return ready;
  });
  return loading;
}

/** Origin and path of each endpoint, parsed once (there are as many as model entries). */
const targets = new Map<string, { origin: string; path: string }>();

function target(url: string): { origin: string; path: string } {
  let found = targets.get(url);
  if (!found) {
    const parsed = new URL(url);
    found = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    targets.set(url, found);
  }
  return found;
}

export const undiciExchange: Exchange = async (url, headers, body, cutoff) => {
  const { origin, path } = target(url);
  const answer = await (await pool()).request({ origin, path, method: "POST", headers, body, signal: cutoff });
  const received = answer.headers;
  return {
    status: answer.statusCode,
    header: (name) => {
      const value = received[name];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    body: answer.body,
  };
};

/** The same over an injected `fetch` (tests: in-memory servers, bodies cut at chosen bytes). */
export function fetchExchange(fetchImpl: typeof fetch): Exchange {
  return async (url, headers, body, cutoff) => {
    const controller = new AbortController();
    const abort = () => controller.abort(cutoff.reason);
    if (cutoff.aborted) abort();
    else cutoff.once("abort", abort);
    const response = await fetchImpl(url, { method: "POST", headers, body, signal: controller.signal });
    return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, body: webBody(response.body) };
  };
}

function webBody(stream: ReadableStream<Uint8Array> | null): AnswerBody {
  const reader = stream?.getReader();
  return {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<Uint8Array>> => {
        if (!reader) return { done: true, value: undefined };
        const chunk = await reader.read();
        return chunk.done ? { done: true, value: undefined } : { done: false, value: chunk.value };
      },
    }),
    destroy: () => void reader?.cancel().catch(() => {}),
  };
}
