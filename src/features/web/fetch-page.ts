import type { Dispatcher } from "undici";
import type { AllowList } from "./addresses.js";
import { FetchRefused, refusal } from "./guard.js";
import { type Answer, ask } from "./http.js";

/**
 * One web_fetch: GET the URL, follow redirects by hand (each target is
 * checked like the first URL, its scheme too, and the connection it makes
 * goes through the guard's connector), at most `maxRedirects` of them, the
 * body read up to `maxBytes`.
 */

/** PicoClaw's browser User-Agent: sites answer it as they answer a person. */
export const BROWSER_AGENT = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
/** Who asks, said plainly: sent once more when a site answers a browser with a bot challenge (Cloudflare's). */
export const HONEST_AGENT = "picoclaw-ts (+https://github.com/sipeed/picoclaw; AI assistant bot)";

export interface PageLimits {
  readonly maxBytes: number;
  readonly maxRedirects: number;
}

export interface Page extends Answer {
  /** Where the answer came from, after redirects. */
  readonly url: URL;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function fetchPage(start: URL, dispatcher: Dispatcher, allow: AllowList, limits: PageLimits, signal: AbortSignal): Promise<Page> {
  let url = start;
  for (let redirects = 0; ; redirects++) {
    const refused = refusal(url, allow);
    if (refused) throw new FetchRefused(redirects === 0 ? refused : `redirect to ${url.href} refused: ${refused}`);
    let answer = await get(dispatcher, url, BROWSER_AGENT, limits.maxBytes, signal);
    if (answer.status === 403 && answer.header("cf-mitigated")?.toLowerCase() === "challenge") {
      answer = await get(dispatcher, url, HONEST_AGENT, limits.maxBytes, signal);
    }
    const location = answer.header("location");
    if (!REDIRECTS.has(answer.status) || location === undefined) return { ...answer, url };
    if (redirects >= limits.maxRedirects) throw new FetchRefused(`stopped after ${limits.maxRedirects} redirects (tools.web_fetch.max_redirects)`);
    if (!URL.canParse(location, url.href)) throw new FetchRefused(`redirect to ${JSON.stringify(location.slice(0, 200))} refused: not a URL`);
    url = new URL(location, url);
  }
}

function get(dispatcher: Dispatcher, url: URL, agent: string, maxBytes: number, signal: AbortSignal): Promise<Answer> {
  return ask(dispatcher, {
    url,
    headers: { "user-agent": agent, accept: "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5" },
    signal,
    maxBytes,
    skipBody: (status, header) => REDIRECTS.has(status) && header("location") !== undefined,
  });
}
