import type { z } from "zod";
import { type braveSection, keysOf } from "../config.js";
import { KeyPool, type SearchHttp, type SearchProvider, SearchError, call, jsonOf, list, quoted, resultLines, rotates, text, withKeys } from "./provider.js";

/** Brave Search's web API: GET `<api_base>?q=&count=&freshness=`, the key in `X-Subscription-Token`; results under `web.results[]` (`title`, `url`, `description`). */

const FRESHNESS = { d: "pd", w: "pw", m: "pm", y: "py" } as const;

export function braveProvider(section: z.output<typeof braveSection>, http: SearchHttp): SearchProvider {
  const pool = new KeyPool(keysOf(section));
  return {
    name: "brave",
    maxResults: section.max_results,
    search: ({ query, count, range, signal }) =>
      withKeys(pool, async (key) => {
        const url = new URL(section.api_base);
        url.searchParams.set("q", query);
        url.searchParams.set("count", String(count));
        if (range !== "") url.searchParams.set("freshness", FRESHNESS[range]);
        const answer = await call(
          http,
          { url, headers: { accept: "application/json", "x-subscription-token": key } },
          signal,
          section.timeout_seconds,
          "tools.web.brave.timeout_seconds",
        );
        if (answer.status !== 200) {
          const message = `API error (status ${answer.status}): ${quoted(answer)}`;
          if (rotates(answer.status)) return { retry: message };
          throw new SearchError(message);
        }
        const body = jsonOf(answer);
        const results = list((body as { web?: unknown } | null)?.web, "results");
        // PicoClaw's Brave lines name no provider.
        return resultLines(
          query,
          undefined,
          results.map((item) => ({ title: text(item, "title"), url: text(item, "url"), snippet: text(item, "description") })),
          count,
        );
      }),
  };
}
