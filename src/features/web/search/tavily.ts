import type { z } from "zod";
import { keysOf, type tavilySection } from "../config.js";
import { BROWSER_AGENT } from "../fetch-page.js";
import {
  KeyPool,
  RANGE_WORDS,
  type SearchHttp,
  type SearchProvider,
  SearchError,
  call,
  jsonOf,
  list,
  quoted,
  resultLines,
  rotates,
  text,
  withKeys,
} from "./provider.js";

/** Tavily's search API: POST JSON to `<api_base>` with the key in the body; results under `results[]` (`title`, `url`, `content`). */

export function tavilyProvider(section: z.output<typeof tavilySection>, http: SearchHttp): SearchProvider {
  const pool = new KeyPool(keysOf(section));
  return {
    name: "tavily",
    maxResults: section.max_results,
    search: ({ query, count, range, signal }) =>
      withKeys(pool, async (key) => {
        const payload: Record<string, unknown> = {
          api_key: key,
          query,
          search_depth: "advanced",
          include_answer: false,
          include_images: false,
          include_raw_content: false,
          max_results: count,
        };
        if (range !== "") payload.time_range = RANGE_WORDS[range];
        const answer = await call(
          http,
          {
            url: new URL(section.api_base),
            method: "POST",
            headers: { "content-type": "application/json", "user-agent": BROWSER_AGENT },
            body: JSON.stringify(payload),
          },
          signal,
          section.timeout_seconds,
          "tools.web.tavily.timeout_seconds",
        );
        if (answer.status !== 200) {
          const message = `tavily api error (status ${answer.status}): ${quoted(answer)}`;
          if (rotates(answer.status)) return { retry: message };
          throw new SearchError(message);
        }
        const results = list(jsonOf(answer), "results");
        return resultLines(
          query,
          "Tavily",
          results.map((item) => ({ title: text(item, "title"), url: text(item, "url"), snippet: text(item, "content") })),
          count,
        );
      }),
  };
}
