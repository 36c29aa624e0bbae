import { Body, extractBody } from "./body.js";
import { Headers, type HeadersSource } from "./headers.js";
import { isStandardInstance } from "./standard-instance.js";

/** What a Response is made with: the standard's ResponseInit (a Response itself is one too). */
export interface ResponseOptions {
  status?: number;
  statusText?: string;
  headers?: HeadersSource | Headers | globalThis.Headers;
}

/** Statuses whose answer has no body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Made by `Response.error()`, the only Response whose status is 0. */
const NETWORK_ERROR = Symbol("networkError");

/**
 * The Fetch standard's Response, as the gateway's HTTP edge uses it (why the gateway has its own: headers.ts).
 * A body is kept as it was given (mostly a string) until something reads it; the node listener writes such a
 * body to the socket as it is.
 */
export class Response extends Body {
  readonly status: number;
  readonly statusText: string;
  readonly #headers: Headers;
  readonly #error: boolean;

  constructor(body?: unknown, init?: ResponseOptions | typeof NETWORK_ERROR) {
    const extracted = extractBody(body);
    super(extracted.source);
    if (init === NETWORK_ERROR) {
      this.status = 0;
      this.statusText = "";
      this.#headers = new Headers();
      this.#error = true;
      return;
    }
    const status = init?.status ?? 200;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError(`Response: status ${JSON.stringify(status)} is not an integer from 200 to 599`);
    }
    const statusText = init?.statusText ?? "";
    if (!REASON_PHRASE.test(statusText)) throw new TypeError("Response: statusText holds a character a reason phrase cannot");
    if (extracted.source.kind !== "none" && NULL_BODY.has(status)) throw new TypeError(`Response: a ${status} answer cannot have a body`);
    this.status = status;
    this.statusText = statusText;
    this.#headers = new Headers(init?.headers as HeadersSource | undefined);
    this.#error = false;
    if (extracted.contentType && !this.#headers.has("content-type")) this.#headers.set("content-type", extracted.contentType);
  }

  static json(data: unknown, init?: ResponseOptions): Response {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError("Response.json: the value cannot be written as JSON");
    const response = new Response(text, init);
    if (!new Headers(init?.headers as HeadersSource | undefined).has("content-type")) response.headers.set("content-type", "application/json");
    return response;
  }

  static redirect(url: string | URL, status = 302): Response {
    if (!REDIRECTS.has(status)) throw new RangeError(`Response.redirect: ${status} is not a redirect status`);
    return new Response(null, { status, headers: { location: new URL(url).href } });
  }

  static error(): Response {
    return new Response(null, NETWORK_ERROR);
  }

  override get headers(): Headers {
    return this.#headers;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get type(): string {
    return this.#error ? "error" : "default";
  }

  get url(): string {
    return "";
  }

  get redirected(): boolean {
    return false;
  }

  clone(): Response {
    if (this.#error) return Response.error();
    const copy = new Response(null, { status: this.status, statusText: this.statusText, headers: this.#headers });
    copy.replaceSource(this.cloneSource());
    return copy;
  }

  get [Symbol.toStringTag](): string {
    return "Response";
  }

  /** Node's and other Responses count as ours: hono's checks accept a Response a plugin's route got from `fetch`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked (a subclass keeps its own check)
    return isStandardInstance(this, Response, "Response", value);
  }
}

/** A Response of ours typed as the standard's, for where hono's types want one (`c.res = ...`, a handler's answer). */
export function webResponse(body?: unknown, init?: ResponseOptions): globalThis.Response {
  return new Response(body, init) as unknown as globalThis.Response;
}
