import type { z } from "zod";
import type { duckduckgoSection } from "../config.js";
import { BROWSER_AGENT } from "../fetch-page.js";
import { type ResultItem, type SearchHttp, type SearchProvider, SearchError, call, resultLines } from "./provider.js";

/**
 * DuckDuckGo without a key: its HTML results page (`<api_base>?q=&df=`),
 * read with a real HTML parser (linkedom, loaded with the first search):
 * each result's `a.result__a` (title, and the target inside DuckDuckGo's
 * `uddg=` redirect) and `.result__snippet`, ads left out.
 */

const DATE_FILTER = { d: "d", w: "w", m: "m", y: "y" } as const;

/** The results of a DuckDuckGo HTML page, in order. */
export async function duckduckgoResults(html: string): Promise<ResultItem[]> {
  const { parseHTML } = await import("linkedom");
  const { document } = parseHTML(html);
  const items: ResultItem[] = [];
  for (const link of document.querySelectorAll("a.result__a")) {
    const result = link.closest(".result");
    if (result?.classList.contains("result--ad")) continue;
    const snippet = result?.querySelector(".result__snippet");
    items.push({ title: squash(link.textContent), url: target(link.getAttribute("href") ?? ""), snippet: squash(snippet?.textContent) });
  }
  return items;
}

const squash = (value: string | null | undefined) => (value ?? "").replace(/\s+/g, " ").trim();

/** The page a result links to: DuckDuckGo's redirect (`//duckduckgo.com/l/?uddg=<target>`) unwrapped. */
function target(href: string): string {
  if (!URL.canParse(href, "https://duckduckgo.com/")) return href;
  const url = new URL(href, "https://duckduckgo.com/");
  return url.searchParams.get("uddg") ?? url.href;
}

export function duckduckgoProvider(section: z.output<typeof duckduckgoSection>, http: SearchHttp): SearchProvider {
  return {
    name: "duckduckgo",
    maxResults: section.max_results,
    search: async ({ query, count, range, signal }) => {
      const url = new URL(section.api_base);
      url.searchParams.set("q", query);
      if (range !== "") url.searchParams.set("df", DATE_FILTER[range]);
      const answer = await call(
        http,
        { url, headers: { "user-agent": BROWSER_AGENT, accept: "text/html" } },
        signal,
        section.timeout_seconds,
        "tools.web.duckduckgo.timeout_seconds",
      );
      if (answer.status !== 200) throw new SearchError(`DuckDuckGo returned status ${answer.status}`);
      const items = (await duckduckgoResults(answer.body.toString("utf8"))).slice(0, count);
      if (items.length === 0) return `No results found or extraction failed. Query: ${query}`;
      return resultLines(query, "DuckDuckGo", items, count);
    },
  };
}
