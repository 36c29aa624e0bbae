import { isStandardInstance } from "./standard-instance.js";
/**
 * The Fetch standard's Headers, as the gateway's HTTP edge uses them (see
 * README, "Architecture": why the gateway has its own Headers, Request and
 * Response). Node's own classes live in its built-in undici, whose loading
 * alone costs a process ~10 MiB and ~17 ms (it compiles a WebAssembly HTTP
 * parser as it loads); hono makes a Headers for nearly every answer.
 *
 * What a caller sees is the standard's: names are case-insensitive and
 * listed lower-cased and sorted, values trimmed of HTTP whitespace, values
 * of one name joined with ", " (Cookie's with "; ", Set-Cookie kept apart,
 * `getSetCookie()`), a bad name or a value with a control character (CR,
 * LF, NUL...) or one past U+00FF a TypeError (Node would refuse to write it).
 */
export type HeadersSource =
  | Iterable<readonly [string, string] | readonly string[]>
  | Record<string, string | readonly string[] | undefined>
  | { forEach(callback: (value: string, name: string) => void): void };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What no header value may hold: CR, LF, NUL (the standard), and what HTTP/1.1 cannot carry either, as Node says when it writes (other controls, DEL, and characters past U+00FF). */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const SET_COOKIE = "set-cookie";

function checkedName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: ${JSON.stringify(text.slice(0, 80))} is not a valid header name`);
  return text.toLowerCase();
}

function checkedValue(name: string, value: string): string {
  const text = String(value).replace(EDGE_WHITESPACE, "");
  if (BAD_VALUE.test(text)) throw new TypeError(`Headers: the value of ${name} holds a control character or one past U+00FF`);
  return text;
}

export class Headers {
  /** Lower-cased name to its value (values of one name joined with ", "); Set-Cookie apart. */
  readonly #values = new Map<string, string>();
  #cookies: string[] = [];

  constructor(init?: HeadersSource | null) {
    if (init === undefined || init === null) return;
    if (typeof init !== "object") throw new TypeError("Headers: expected a record, a list of pairs or a Headers");
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        if (pair.length !== 2) throw new TypeError("Headers: each pair must have exactly a name and a value");
        this.append(pair[0] as string, pair[1] as string);
      }
      return;
    }
    for (const name of Object.keys(init)) {
      const value = (init as Record<string, unknown>)[name];
      if (value === undefined) continue;
      this.append(name, value as string);
    }
  }

  /**
   * Headers as Node gives them (`IncomingMessage.rawHeaders`: name, value, name, value...), which Node's parser has
   * checked already.
   */
  static fromRaw(raw: readonly string[]): Headers {
    const headers = new Headers();
    for (let i = 0; i + 1 < raw.length; i += 2) headers.#add((raw[i] as string).toLowerCase(), raw[i + 1] as string);
    return headers;
  }

  #add(name: string, value: string): void {
    if (name === SET_COOKIE) {
      this.#cookies.push(value);
      return;
    }
    const had = this.#values.get(name);
    // Cookies are joined as a Cookie header joins them (as Node's Headers do), every other name with a comma.
    this.#values.set(name, had === undefined ? value : `${had}${name === "cookie" ? "; " : ", "}${value}`);
  }

  append(name: string, value: string): void {
    const key = checkedName(name);
    this.#add(key, checkedValue(key, value));
  }

  set(name: string, value: string): void {
    const key = checkedName(name);
    const text = checkedValue(key, value);
    if (key === SET_COOKIE) this.#cookies = [text];
    else this.#values.set(key, text);
  }

  delete(name: string): void {
    const key = checkedName(name);
    if (key === SET_COOKIE) this.#cookies = [];
    else this.#values.delete(key);
  }

  get(name: string): string | null {
    const key = checkedName(name);
    if (key === SET_COOKIE) return this.#cookies.length === 0 ? null : this.#cookies.join(", ");
    return this.#values.get(key) ?? null;
  }

  has(name: string): boolean {
    const key = checkedName(name);
    return key === SET_COOKIE ? this.#cookies.length > 0 : this.#values.has(key);
  }

  getSetCookie(): string[] {
    return [...this.#cookies];
  }

  /** The pairs in the standard's order: sorted by name, each Set-Cookie a pair of its own. */
  #pairs(): [string, string][] {
    const names = [...this.#values.keys()];
    if (this.#cookies.length > 0) names.push(SET_COOKIE);
    names.sort();
    const pairs: [string, string][] = [];
    for (const name of names) {
      if (name === SET_COOKIE) for (const cookie of this.#cookies) pairs.push([SET_COOKIE, cookie]);
      else pairs.push([name, this.#values.get(name) as string]);
    }
    return pairs;
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#pairs()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    yield* this.#pairs();
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.#pairs()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.#pairs()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  /**
   * The headers for Node's `writeHead`: one entry a name, Set-Cookie a list. `contentLength` tells whether a
   * Content-Length is among them.
   */
  toNode(): { headers: Record<string, string | string[]>; contentLength: boolean } {
    const headers: Record<string, string | string[]> = Object.fromEntries(this.#values);
    if (this.#cookies.length > 0) headers[SET_COOKIE] = [...this.#cookies];
    return { headers, contentLength: this.#values.has("content-length") };
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }

  /** Node's and other Headers count as ours: a check `x instanceof Headers` in hono accepts either. */
  static [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked (a subclass keeps its own check)
    return isStandardInstance(this, Headers, "Headers", value);
  }
}
