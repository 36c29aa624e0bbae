import type { Readable } from "node:stream";
import { Body, type BodySource, extractBody, takeBody } from "./body.js";
import { Headers, type HeadersSource } from "./headers.js";
import { isStandardInstance } from "./standard-instance.js";

/** What a Request is made with: the standard's RequestInit, as far as a server's side of it goes. */
export interface RequestOptions {
  method?: string;
  headers?: HeadersSource | Headers | globalThis.Headers;
  body?: unknown;
  signal?: AbortSignal | null;
  /** Taken and ignored: a request's body here is always half-duplex. */
  duplex?: string;
}

/** What a Request may be made from, besides a URL: another Request (ours or Node's). */
interface RequestLike {
  url: string;
  method: string;
  headers: HeadersSource | Headers | globalThis.Headers;
  signal?: AbortSignal | null;
  body?: ReadableStream<Uint8Array> | null;
}

/** A request as Node's server received it, made into a Request by the node listener without parsing anything twice. */
export interface NodeRequestParts {
  url: string;
  method: string;
  rawHeaders: readonly string[];
  /** Null for a request without a body (a GET, a HEAD). */
  incoming: (Readable & { rawBody?: Buffer }) | null;
  /** The signal that aborts when the client goes; made only if something asks for it. */
  signal: () => AbortSignal;
}

const FROM_NODE = Symbol("fromNode");
const STANDARD_METHODS = /^(?:delete|get|head|options|post|put)$/i;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

function methodOf(method: string): string {
  const text = String(method);
  if (!TOKEN.test(text)) throw new TypeError(`Request: ${JSON.stringify(text.slice(0, 40))} is not a valid method`);
  const upper = text.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) throw new TypeError(`Request: the method ${upper} is not allowed`);
  return STANDARD_METHODS.test(text) ? upper : text;
}

function urlOf(input: string): string {
  try {
    return new URL(input).href;
  } catch {
    throw new TypeError(`Request: cannot parse ${JSON.stringify(input.slice(0, 200))} as a URL`);
  }
}

/**
 * The Fetch standard's Request, as the gateway's HTTP edge uses it (why the gateway has its own: headers.ts).
 * Made from Node's request (`Request.fromNode`), it parses its headers only when asked for them, reads its body
 * only when asked for it, and makes its abort signal only when something asks for it.
 */
export class Request extends Body {
  readonly url: string;
  readonly method: string;
  #headers: Headers | undefined;
  #rawHeaders: readonly string[] | undefined;
  #signal: AbortSignal | undefined;
  #signalOf: (() => AbortSignal) | undefined;

  constructor(input: string | URL | RequestLike | typeof FROM_NODE, init?: RequestOptions | NodeRequestParts) {
    if (input === FROM_NODE) {
      const parts = init as NodeRequestParts;
      super(parts.incoming ? { kind: "incoming", incoming: parts.incoming } : { kind: "none" });
      this.url = parts.url;
      this.method = parts.method;
      this.#rawHeaders = parts.rawHeaders;
      this.#signalOf = parts.signal;
      return;
    }
    const options = (init ?? {}) as RequestOptions;
    const from = typeof input === "object" && !(input instanceof URL) ? input : undefined;
    const method = options.method !== undefined ? methodOf(options.method) : (from?.method ?? "GET");
    const hasBody = options.body !== undefined && options.body !== null;
    if (hasBody && (method === "GET" || method === "HEAD")) throw new TypeError(`Request: a ${method} request cannot have a body`);
    const extracted = hasBody ? extractBody(options.body) : undefined;
    let source: BodySource = extracted?.source ?? { kind: "none" };
    if (!hasBody && from) {
      source = takeBody in from ? (from as Request)[takeBody]() : from.body ? { kind: "stream", stream: from.body } : source;
      if (source.kind !== "none" && (method === "GET" || method === "HEAD")) throw new TypeError(`Request: a ${method} request cannot have a body`);
    }
    super(source);
    this.url = from ? from.url : urlOf(String(input));
    this.method = method;
    this.#headers = new Headers((options.headers ?? from?.headers) as HeadersSource | undefined);
    if (extracted?.contentType && !this.#headers.has("content-type")) this.#headers.set("content-type", extracted.contentType);
    const signal = "signal" in options ? options.signal : from?.signal;
    if (signal) this.#signal = signal;
  }

  /** A Request for a request Node's server received (the node listener's). */
  static fromNode(parts: NodeRequestParts): Request {
    return new Request(FROM_NODE, parts);
  }

  override get headers(): Headers {
    if (this.#headers === undefined) {
      this.#headers = Headers.fromRaw(this.#rawHeaders ?? []);
      this.#rawHeaders = undefined;
    }
    return this.#headers;
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) this.#signal = this.#signalOf ? this.#signalOf() : new AbortController().signal;
    return this.#signal;
  }

  get cache(): string {
    return "default";
  }

  get credentials(): string {
    return "same-origin";
  }

  get destination(): string {
    return "";
  }

  get integrity(): string {
    return "";
  }

  get keepalive(): boolean {
    return false;
  }

  get mode(): string {
    return "cors";
  }

  get redirect(): string {
    return "follow";
  }

  get referrer(): string {
    return "about:client";
  }

  get referrerPolicy(): string {
    return "";
  }

  get duplex(): string {
    return "half";
  }

  clone(): Request {
    const copy = new Request(this.url, { method: this.method, headers: this.headers, signal: this.signal });
    copy.replaceSource(this.cloneSource());
    return copy;
  }

  get [Symbol.toStringTag](): string {
    return "Request";
  }

  /** Node's and other Requests count as ours: hono's `app.request(new Request(...))` takes either. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked (a subclass keeps its own check)
    return isStandardInstance(this, Request, "Request", value);
  }
}
