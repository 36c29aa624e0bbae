import type { IncomingMessage, ServerResponse } from "node:http";
import { AbortedError } from "../../errors.js";
import { type BodySource, streamOf, takeBody } from "./body.js";
import { Headers } from "./headers.js";
import { Request } from "./request.js";
import { Response } from "./response.js";

/** What the app's `fetch` is given besides the request: Node's two halves of the exchange (hono's `c.env`). */
export interface NodeBindings {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

type Answer = Response | globalThis.Response;
export type FetchHandler = (request: Request, env: NodeBindings) => Answer | Promise<Answer>;

/**
 * A request body left unread when its answer is done is read and dropped for at most DRAIN_MS and DRAIN_BYTES; past
 * either, its connection is closed: a client cannot keep the gateway reading a body nobody wants.
 */
const DRAIN_MS = 500;
const DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * A Host that may skip the URL parser once found good: a lower-case name with a port of 1000-59999 (or none). Any
 * other is parsed with each request.
 */
const SAFE_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
const SAFE_PATH = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

class BadRequest extends Error {}

/** Hosts found good (their URL parses to the same host), at most HOSTS_KEPT: a gateway is reached by few names. */
const goodHosts = new Set<string>();
const HOSTS_KEPT = 64;

/** Whether `host` makes a URL whose host is itself (`256.256.256.256` or `a.1` do not parse; `a@b` names another). */
function goodHost(host: string): boolean {
  if (goodHosts.has(host)) return true;
  if (!SAFE_HOST.test(host) || !URL.canParse(`http://${host}/`)) return false;
  if (new URL(`http://${host}/`).host !== host) return false;
  if (goodHosts.size < HOSTS_KEPT) goodHosts.add(host);
  return true;
}

/** The request's URL from its target and Host, as a browser would resolve it; what does not make one is refused. */
export function requestUrl(target: string, host: string | undefined, encrypted: boolean): string {
  if (target.startsWith("http://") || target.startsWith("https://")) {
    // The absolute form (`GET http://host/path HTTP/1.1`), which HTTP/1.1 servers take.
    if (!URL.canParse(target) || target.indexOf("\\") !== -1) throw new BadRequest("the request's target is not a valid URL");
    return new URL(target).href;
  }
  if (!target.startsWith("/")) throw new BadRequest("the request's target must be a path beginning with /");
  if (!host) throw new BadRequest("the request has no Host header");
  const url = `${encrypted ? "https" : "http"}://${host}${target}`;
  if (SAFE_PATH.test(target) && !DOT_SEGMENT.test(target) && goodHost(host)) return url;
  const query = target.indexOf("?");
  const backslash = target.indexOf("\\");
  if (backslash !== -1 && (query === -1 || backslash < query)) throw new BadRequest("the request's path holds a backslash");
  if (!URL.canParse(url)) throw new BadRequest("the request's Host and path do not make a URL");
  const parsed = new URL(url);
  // A Host such as `a@b` or `a/b` would make the URL's host another than the header's.
  if (parsed.hostname !== host.replace(/:\d*$/, "").toLowerCase()) throw new BadRequest("the request's Host header is not a host");
  return parsed.href;
}

/**
 * Node's server to a fetch-style app (hono's `app.fetch`), in the place of @hono/node-server: each request is a
 * `Request` of ours and each answer, ours or Node's, is written to Node's response. An answer whose body is a string
 * or bytes is written at once, with its Content-Length; a stream is written as it comes, as fast as the client
 * reads it. The request's signal aborts when the client goes before its answer is done.
 */
export function nodeListener(
  fetch: FetchHandler,
  options: {
    /** The host of a request without a Host header (HTTP/1.0). */
    hostname: string;
    /** Told of an app that threw instead of answering (the client gets a 500); a process warning if not given. */
    onError?: (error: unknown) => void;
  },
): (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> {
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(error instanceof Error ? error : new Error(String(error))));
  return async (incoming, outgoing) => {
    let controller: AbortController | undefined;
    let gone: string | undefined;
    let request: Request;
    const codings = incoming.headers["transfer-encoding"];
    if (codings !== undefined && !onlyChunked(codings)) {
      // Node's parser frames such a body as chunked and hands it over still encoded (gzip, say): refused, as HTTP asks of
      // a server that does not decode a transfer coding, and the connection closed, as its framing is in doubt.
      return sendRefusal(outgoing, 501, "not_implemented", `Transfer-Encoding ${JSON.stringify(codings.slice(0, 80))} is not supported: only chunked`);
    }
    try {
      const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD";
      request = Request.fromNode({
        url: requestUrl(incoming.url ?? "", incoming.headers.host ?? options.hostname, "encrypted" in incoming.socket),
        method: incoming.method ?? "GET",
        rawHeaders: incoming.rawHeaders,
        incoming: hasBody ? incoming : null,
        signal: () => {
          controller ??= new AbortController();
          if (gone !== undefined) controller.abort(new AbortedError(gone));
          return controller.signal;
        },
      });
    } catch (error) {
      if (!(error instanceof BadRequest)) throw error;
      return sendBadRequest(outgoing, error.message);
    }
    outgoing.once("close", () => {
      if (outgoing.writableFinished && !incoming.errored) return;
      gone = incoming.errored
        ? `the client went away (${String(incoming.errored)})`
        : "the client went away: it closed the connection before its answer was done";
      controller?.abort(new AbortedError(gone));
    });
    if (request.method !== "GET" && request.method !== "HEAD") outgoing.once("finish", () => drainUnread(incoming));
    let answer: Answer;
    try {
      answer = await fetch(request, { incoming, outgoing });
    } catch (error) {
      onError(error);
      return sendFailure(outgoing);
    }
    try {
      await send(answer, outgoing);
    } catch (error) {
      // An answer Node cannot write (a header value it refuses, a body used already): a 500 if nothing went out yet,
      // else the connection cut. Never an unhandled rejection, which would end the process.
      onError(error);
      if (!outgoing.headersSent && !outgoing.destroyed) sendFailure(outgoing);
      else outgoing.destroy();
    }
  };
}

function sendFailure(outgoing: ServerResponse): void {
  const body = JSON.stringify({ error: { code: "internal", message: "internal error; see the gateway log" } });
  outgoing.writeHead(500, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  outgoing.end(body);
}

/** Whether a Transfer-Encoding names chunked alone (the one transfer coding the gateway takes). */
function onlyChunked(codings: string): boolean {
  return codings.split(",").every((coding) => coding.trim().toLowerCase() === "chunked");
}

function sendBadRequest(outgoing: ServerResponse, message: string): void {
  sendRefusal(outgoing, 400, "invalid_request", message);
}

/** A refusal before the app sees the request, its connection closed after it. */
function sendRefusal(outgoing: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  outgoing.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" });
  outgoing.end(body);
}

/** Node's answer's headers from a Response's, ours or Node's. */
function nodeHeaders(answer: Answer): { headers: Record<string, string | string[]>; contentLength: boolean } {
  if (answer.headers instanceof Headers && "toNode" in answer.headers) return answer.headers.toNode();
  const headers: Record<string, string | string[]> = {};
  answer.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = answer.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  return { headers, contentLength: "content-length" in headers };
}

async function send(answer: Answer, outgoing: ServerResponse): Promise<void> {
  if (answer.status === 0) answer = new Response(null, { status: 500 });
  const { headers, contentLength } = nodeHeaders(answer);
  let source: BodySource =
    takeBody in answer
      ? (answer as Response)[takeBody]()
      : answer.body
        ? { kind: "stream", stream: answer.body as ReadableStream<Uint8Array> }
        : { kind: "none" };
  if (source.kind === "pending") source = { kind: "bytes", bytes: await source.bytes };
  const head = (extra?: number) => {
    // A length the answer did not give, unless it is sent chunked (HTTP forbids both).
    if (extra !== undefined && !contentLength && !("transfer-encoding" in headers)) headers["content-length"] = String(extra);
    if (answer.statusText) outgoing.writeHead(answer.status, answer.statusText, headers);
    else outgoing.writeHead(answer.status, headers);
  };
  if (outgoing.destroyed) {
    if (source.kind === "stream") await source.stream.cancel().catch(() => {});
    return;
  }
  switch (source.kind) {
    case "none":
      head();
      outgoing.end();
      return;
    case "text":
      head(Buffer.byteLength(source.text));
      outgoing.end(source.text);
      return;
    case "bytes":
      head(source.bytes.byteLength);
      outgoing.end(source.bytes);
      return;
    default: {
      const stream = streamOf(source);
      if (stream?.locked) throw new TypeError("the answer's body stream is locked to another reader");
      head();
      outgoing.flushHeaders();
      if (stream) await pump(stream, outgoing);
      else outgoing.end();
    }
  }
}

/** Writes a stream to the client as fast as it reads; the stream is cancelled if the client goes. */
async function pump(stream: ReadableStream<Uint8Array>, outgoing: ServerResponse): Promise<void> {
  const reader = stream.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  outgoing.once("close", cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        outgoing.end();
        return;
      }
      if (outgoing.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
      if (!outgoing.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            outgoing.off("drain", go);
            outgoing.off("close", go);
            resolve();
          };
          outgoing.on("drain", go);
          outgoing.on("close", go);
        });
      }
    }
  } catch (error) {
    outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    outgoing.off("close", cancel);
  }
}

/** Reads and drops what is left of a request's body once its answer is done, within DRAIN_MS and DRAIN_BYTES. */
function drainUnread(incoming: IncomingMessage): void {
  if (incoming.readableEnded || incoming.destroyed) return;
  let bytes = 0;
  const stop = () => {
    clearTimeout(timer);
    incoming.off("data", count);
    incoming.off("end", stop);
    incoming.off("error", stop);
  };
  const cut = () => {
    stop();
    incoming.socket?.destroySoon();
  };
  const count = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > DRAIN_BYTES) cut();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  incoming.on("data", count);
  incoming.once("end", stop);
  incoming.once("error", stop);
  incoming.resume();
}
