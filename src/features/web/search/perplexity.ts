import type { z } from "zod";
import { keysOf, type perplexitySection } from "../config.js";
import { BROWSER_AGENT } from "../fetch-page.js";
import { KeyPool, RANGE_WORDS, type SearchHttp, type SearchProvider, SearchError, call, jsonOf, list, quoted, rotates, text, withKeys } from "./provider.js";

/**
 * Perplexity: an OpenAI-style chat completion (`<api_base>/chat/completions`,
 * model `sonar`, the key as a bearer token) asked for results in PicoClaw's
 * numbered format; its answer is the first choice's `message.content`.
 */

const INSTRUCTIONS =
  "You answer web searches with results only. For each result write three lines: its number and title, then its URL indented by three spaces, then a one-line description indented by three spaces, like:\n1. Title\n   URL\n   Description\nNo other text.";

export function perplexityProvider(section: z.output<typeof perplexitySection>, http: SearchHttp): SearchProvider {
  const pool = new KeyPool(keysOf(section));
  const endpoint = `${section.api_base.replace(/\/+$/, "")}/chat/completions`;
  return {
    name: "perplexity",
    maxResults: section.max_results,
    search: ({ query, count, range, signal }) =>
      withKeys(pool, async (key) => {
        const payload: Record<string, unknown> = {
          model: "sonar",
          messages: [
            { role: "system", content: INSTRUCTIONS },
            { role: "user", content: `Search for: ${query}. Give at most ${count} results.` },
          ],
          max_tokens: 1000,
        };
        if (range !== "") payload.search_recency_filter = RANGE_WORDS[range];
        const answer = await call(
          http,
          {
            url: new URL(endpoint),
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "user-agent": BROWSER_AGENT },
            body: JSON.stringify(payload),
          },
          signal,
          section.timeout_seconds,
          "tools.web.perplexity.timeout_seconds",
        );
        if (answer.status !== 200) {
          const message = `Perplexity API error: ${quoted(answer)}`;
          if (rotates(answer.status)) return { retry: message };
          throw new SearchError(message);
        }
        const choices = list(jsonOf(answer), "choices");
        if (choices.length === 0) return `No results for: ${query}`;
        const message = (choices[0] as { message?: unknown } | null)?.message;
        return `Results for: ${query} (via Perplexity)\n${text(message, "content")}`;
      }),
  };
}
