import { EventEmitter } from "node:events";
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { createRequire } from "node:module";

/** node:https (and TLS with it), loaded with the first https call: a gateway whose models are all http never loads it (~1.4 MiB, ~4 ms of start). */
let httpsModule: typeof import("node:https") | undefined;
const https = (): typeof import("node:https") => (httpsModule ??= createRequire(import.meta.url)("node:https") as typeof import("node:https"));

/**
 * One POST to a model server and its answer, as the transport and the
 * answer readers see it: a status, headers, and a body read chunk by chunk.
 * In production it is node:http(s)'s `request` on one pool of kept-alive
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
 * An EventEmitter with `aborted` and `reason`, so stopping costs no
 * AbortController and no DOMException.
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
export type Exchange = (url: string, headers: Record<string, string>, body: Buffer, cutoff: Cutoff) => Promise<ModelAnswer>;

/**
 * The connections to model servers: at most MODEL_CONNECTIONS.perOrigin at
 * once to one server (a call beyond that waits for one to come free, its
 * request_timeout running), an idle one kept `keepAliveMs`, redirects
 * followed up to `maxRedirections`. No timeout of the client's own: the
 * entry's request_timeout and max_duration are the limits.
 */
export const MODEL_CONNECTIONS = { perOrigin: 256, keepAliveMs: 4_000, maxRedirections: 20 } as const;

type Agents = { "http:"?: HttpAgent; "https:"?: HttpsAgent };
const agents: Agents = {};

/**
 * The pools, made with the first call. Node's own HTTP client, whose
 * parser is native: undici's (and `fetch`'s) is WebAssembly, and compiling
 * it costs a process some 15-20 MiB of RSS that it keeps (BENCHMARKS.md, "memory").
 */
function agentFor(protocol: string): HttpAgent | HttpsAgent | undefined {
  const options = { keepAlive: true, maxSockets: MODEL_CONNECTIONS.perOrigin, timeout: MODEL_CONNECTIONS.keepAliveMs };
  if (protocol === "http:") return (agents["http:"] ??= new HttpAgent(options));
  if (protocol === "https:") return (agents["https:"] ??= new (https().Agent)(options));
  return undefined;
}

/** Each endpoint, parsed once (there are as many as model entries). */
const targets = new Map<string, URL>();

function target(url: string): URL {
  let found = targets.get(url);
  if (!found) {
    found = new URL(url);
    targets.set(url, found);
  }
  return found;
}

/** Headers that do not follow a redirect to another origin (as undici's redirect handler does). */
const CREDENTIALS = new Set(["authorization", "proxy-authorization", "cookie"]);
const REDIRECTS = new Set([300, 301, 302, 303, 307, 308]);

/**
 * One request over node:http(s), kept-alive connections pooled per origin.
 * `cutoff` destroys the request (and the answer being read) at once.
 */
export const nodeExchange: Exchange = (url, headers, body, cutoff) => post(url, "POST", headers, body, cutoff, 0);

/**
 * `body` is bytes, encoded once (bodyBytes): its length is the
 * content-length, and node:http writes it beside the head as it is (a
 * string body would be joined to the head's text and that copy encoded on
 * the write).
 */
function post(url: string, method: string, headers: Record<string, string>, body: Buffer | undefined, cutoff: Cutoff, redirects: number): Promise<ModelAnswer> {
  if (cutoff.aborted) return Promise.reject(cutoff.reason);
  const to = target(url);
  const agent = agentFor(to.protocol);
  if (!agent) return Promise.reject(new Error(`not an http(s) URL: ${to.protocol}`));
  const send = to.protocol === "https:" ? https().request : httpRequest;
  return new Promise<ModelAnswer>((resolve, reject) => {
    const sized = body === undefined ? headers : { ...headers, "content-length": String(body.length) };
    const req = send(to, { method, agent, headers: sized });
    const onAbort = () => req.destroy(cutoff.reason);
    cutoff.once("abort", onAbort);
    req.once("error", (error) => {
      cutoff.off("abort", onAbort);
      reject(cutoff.aborted ? cutoff.reason : error);
    });
    req.once("response", (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location && redirects < MODEL_CONNECTIONS.maxRedirections) {
        cutoff.off("abort", onAbort);
        res.resume();
        const next = new URL(location, to);
        // 301/302 of a POST and every 303 go on as GET without the body (and its content headers); 307/308 repeat the request.
        const asGet = status === 303 || ((status === 301 || status === 302) && method === "POST");
        const kept = Object.fromEntries(
          Object.entries(headers).filter(([name]) => {
            const lower = name.toLowerCase();
            if (asGet && lower.startsWith("content-")) return false;
            return next.origin === to.origin || !CREDENTIALS.has(lower);
          }),
        );
        resolve(post(next.href, asGet ? "GET" : method, kept, asGet ? undefined : body, cutoff, redirects + 1));
        return;
      }
      // Once the answer is read (or given up on), the abort has nothing left to stop.
      res.once("close", () => cutoff.off("abort", onAbort));
      resolve({
        status,
        header: (name) => {
          const value = res.headers[name];
          return Array.isArray(value) ? value.join(", ") : value;
        },
        body: { [Symbol.asyncIterator]: () => res[Symbol.asyncIterator](), destroy: () => res.destroy() },
      });
    });
    req.end(body);
  });
}

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
