import type { Dispatcher } from "undici";
import { type Timer, joinSignals } from "../../../signals.js";
import type { ProviderName } from "../config.js";
import { type Answer, type Ask, ask, failure } from "../http.js";

/**
 * What every search provider shares: one interface (a query in, PicoClaw's
 * result text out, or a SearchError whose message follows `search failed: `),
 * one way to call its server (a time limit per call, the answer's body
 * bounded), key rotation over `api_keys` as PicoClaw rotates them, and
 * PicoClaw's result lines.
 */

export type Range = "" | "d" | "w" | "m" | "y";

export interface SearchRequest {
  readonly query: string;
  readonly count: number;
  readonly range: Range;
  readonly signal: AbortSignal;
}

export interface SearchProvider {
  readonly name: ProviderName;
  /** Results per search at most (its `max_results`). */
  readonly maxResults: number;
  search(request: SearchRequest): Promise<string>;
}

/** A search that failed: the message is what the model reads after `search failed: `. */
export class SearchError extends Error {
  override readonly name = "SearchError";
}

/** How providers reach their servers: the dispatcher, and the timer their time limits run on. */
export interface SearchHttp {
  dispatcher(): Promise<Dispatcher>;
  readonly timer: Timer;
}

/** The most of a provider's answer that is read: more is no search result. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** The most of an error answer quoted back. */
const QUOTED = 500;

class CallTimeout extends Error {}

/** One call to a provider's server within `seconds` (and the turn's signal); a SearchError when no answer came. */
export async function call(
  http: SearchHttp,
  request: Omit<Ask, "signal" | "maxBytes">,
  signal: AbortSignal,
  seconds: number,
  setting: string,
): Promise<Answer> {
  const joined = joinSignals([signal]);
  const cancel = http.timer(seconds * 1000, () => joined.abort(new CallTimeout()));
  try {
    return await ask(await http.dispatcher(), { ...request, signal: joined.signal, maxBytes: MAX_ANSWER_BYTES });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (joined.signal.reason instanceof CallTimeout) throw new SearchError(`request failed: no answer within ${seconds} s (${setting})`);
    throw new SearchError(`request failed: ${failure(error)}`);
  } finally {
    cancel();
    joined.dispose();
  }
}

/** An answer's body as text, for an error message (cut). */
export function quoted(answer: Answer): string {
  const text = answer.body.toString("utf8");
  return text.length > QUOTED ? `${text.slice(0, QUOTED)}…` : text;
}

/** An answer's body as JSON; a SearchError in PicoClaw's words when it is none. */
export function jsonOf(answer: Answer): unknown {
  if (answer.cut) throw new SearchError(`failed to parse response: the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  try {
    return JSON.parse(answer.body.toString("utf8"));
  } catch (error) {
    throw new SearchError(`failed to parse response: ${(error as Error).message}`);
  }
}

/** Statuses after which PicoClaw tries the next key: refused, rate limited, or the server failed. */
export const rotates = (status: number) => status === 401 || status === 403 || status === 429 || status >= 500;

/**
 * A provider's keys, used in turn: each search starts at the next key
 * (round robin) and tries the others after a status that `rotates`.
 */
export class KeyPool {
  private next = 0;

  constructor(private readonly keys: readonly string[]) {}

  get size(): number {
    return this.keys.length;
  }

  /** The keys in the order this search tries them. */
  order(): string[] {
    if (this.keys.length === 0) return [];
    const start = this.next++ % this.keys.length;
    return [...this.keys.slice(start), ...this.keys.slice(0, start)];
  }
}

/**
 * Tries each key in turn: `attempt` answers with the result text, or with
 * `{ retry: message }` after a status that rotates; a SearchError from it is
 * the outcome at once, except a failed request, after which the next key is
 * tried too (as PicoClaw does).
 */
export async function withKeys(pool: KeyPool, attempt: (key: string) => Promise<string | { retry: string }>): Promise<string> {
  if (pool.size === 0) throw new SearchError("no API key provided");
  let last = "";
  for (const key of pool.order()) {
    try {
      const outcome = await attempt(key);
      if (typeof outcome === "string") return outcome;
      last = outcome.retry;
    } catch (error) {
      if (error instanceof SearchError && error.message.startsWith("request failed:")) {
        last = error.message;
        continue;
      }
      throw error;
    }
  }
  throw new SearchError(`all api keys failed, last error: ${last}`);
}

export interface ResultItem {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

/**
 * PicoClaw's result text: `Results for: <query>` (with ` (via <Provider>)`
 * when given), then `N. <title>\n   <url>` and `   <snippet>` when there is
 * one, at most `count` items; `No results for: <query>` for none.
 */
export function resultLines(query: string, via: string | undefined, items: readonly ResultItem[], count: number): string {
  if (items.length === 0) return `No results for: ${query}`;
  const lines = [`Results for: ${query}${via ? ` (via ${via})` : ""}`];
  for (const [index, item] of items.slice(0, count).entries()) {
    lines.push(`${index + 1}. ${item.title}\n   ${item.url}`);
    if (item.snippet !== "") lines.push(`   ${item.snippet}`);
  }
  return lines.join("\n");
}

/** A string field of a parsed JSON object ("" when missing or not a string). */
export const text = (value: unknown, key: string): string => {
  const field = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return typeof field === "string" ? field : "";
};

/** An array field of a parsed JSON object ([] when missing or not an array). */
export const list = (value: unknown, key: string): unknown[] => {
  const field = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return Array.isArray(field) ? field : [];
};

/** PicoClaw's mapping of `range` to the day/week/month/year words most APIs take. */
export const RANGE_WORDS: Readonly<Record<Exclude<Range, "">, string>> = { d: "day", w: "week", m: "month", y: "year" };
