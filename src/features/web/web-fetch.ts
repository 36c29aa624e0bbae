import type { Dispatcher } from "undici";
import { z } from "zod";
import { formatBytes } from "../../bytes.js";
import { type Timer, joinSignals } from "../../signals.js";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import type { AllowList } from "./addresses.js";
import type { WebFetchSection, WebSection } from "./config.js";
import { BinaryBody, extract } from "./extract.js";
import { fetchPage } from "./fetch-page.js";
import { FetchRefused } from "./guard.js";
import { failure } from "./http.js";

/**
 * `web_fetch`, PicoClaw's tool: GET a URL and answer with its readable
 * text as PicoClaw's JSON (`url`, `status`, `extractor`, `truncated`,
 * `length`, `text`; its keys in the order Go writes them), the user told
 * `Fetched N bytes from <url> (extractor: X, truncated: B)`. A non-2xx
 * answer is a result like any other. What it may reach, and how much and
 * for how long it reads, is README's "web_fetch and web_search".
 */

export interface WebFetchDeps {
  readonly fetch: WebFetchSection;
  readonly web: WebSection;
  readonly allow: AllowList;
  /** The guarded dispatcher, made with the first call. */
  dispatcher(): Promise<Dispatcher>;
  readonly timer: Timer;
}

/** PicoClaw's default and floor of `maxChars`. */
export const DEFAULT_MAX_CHARS = 50_000;
const MIN_MAX_CHARS = 100;
export const TRUNCATED_NOTE = "\n[Content truncated due to size limit]";

const parameters = z.strictObject({
  url: z.string().describe("The http(s) URL to fetch"),
  maxChars: z.int().optional().describe(`The most characters of text to return (default ${DEFAULT_MAX_CHARS}; values of ${MIN_MAX_CHARS} or less are ignored)`),
});

class TimeLimit extends Error {}

/** The first `max` characters (code points) of a text, and whether there was more. */
function firstChars(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const points = Array.from(text);
  return points.length <= max ? { text, cut: false } : { text: points.slice(0, max).join(""), cut: true };
}

export function webFetchTool(deps: WebFetchDeps): Tool {
  const limitBytes = deps.web.fetch_limit_bytes;
  const seconds = deps.fetch.timeout_seconds;
  return defineTool({
    name: "web_fetch",
    description: `Fetch a web page (http or https) and return its readable content: HTML as ${deps.web.format === "markdown" ? "Markdown" : "plain text"}, JSON pretty-printed, other text as it is. Use it to read articles, documentation, news, or any page found with web_search. Pages on private or local networks cannot be fetched.`,
    parameters,
    enabledByDefault: true,
    // Its own limit (timeout_seconds, redirects and body included) and the turn's end stop it.
    timeoutMs: 0,
    execute: async ({ url: written, maxChars }, ctx) => {
      if (!URL.canParse(written)) return toolResult.error(`invalid URL: ${JSON.stringify(written.slice(0, 200))} is not a URL`);
      const url = new URL(written);
      const joined = joinSignals([ctx.signal]);
      const cancel = deps.timer(seconds * 1000, () => joined.abort(new TimeLimit()));
      try {
        const page = await fetchPage(url, await deps.dispatcher(), deps.allow, { maxBytes: limitBytes, maxRedirects: deps.fetch.max_redirects }, joined.signal);
        const extracted = await extract(page.body, page.header("content-type"), deps.web.format, page.url.href);
        const limit = maxChars !== undefined && maxChars > MIN_MAX_CHARS ? maxChars : DEFAULT_MAX_CHARS;
        const kept = firstChars(extracted.text, limit);
        let text = kept.text;
        if (page.cut) text += `\n[Content cut: the page is larger than ${formatBytes(limitBytes)} (tools.web.fetch_limit_bytes); only its start was read]`;
        else if (kept.cut) text += TRUNCATED_NOTE;
        const truncated = kept.cut || page.cut;
        const length = Array.from(text).length;
        // Go's encoding/json writes a map's keys sorted: PicoClaw's JSON has them in this order.
        const forLLM = JSON.stringify({ extractor: extracted.extractor, length, status: page.status, text, truncated, url: written }, null, 2);
        return toolResult.text(forLLM, `Fetched ${Buffer.byteLength(text)} bytes from ${written} (extractor: ${extracted.extractor}, truncated: ${truncated})`);
      } catch (error) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (joined.signal.reason instanceof TimeLimit) {
          return toolResult.error(`request failed: no complete answer within ${seconds} s (tools.web_fetch.timeout_seconds)`);
        }
        const refused = refusalIn(error);
        if (refused) return toolResult.error(refused.message);
        if (error instanceof BinaryBody) return toolResult.error(error.message);
        return toolResult.error(`request failed: ${failure(error)}`);
      } finally {
        cancel();
        joined.dispose();
      }
    },
  });
}

/** The guard's refusal, however undici wrapped it. */
function refusalIn(error: unknown): FetchRefused | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    if (current instanceof FetchRefused) return current;
    current = current.cause;
  }
  return undefined;
}
