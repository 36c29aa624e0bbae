import type { z } from "zod";
import type { searxngSection } from "../config.js";
import { RANGE_WORDS, type SearchHttp, type SearchProvider, SearchError, call, jsonOf, list, text } from "./provider.js";

/** A SearXNG instance's JSON API: GET `<api_base>/search?q=&format=json&categories=general&time_range=`; results under `results[]` (`title`, `url`, `content`). */

export function searxngProvider(section: z.output<typeof searxngSection>, http: SearchHttp): SearchProvider {
  return {
    name: "searxng",
    maxResults: section.max_results,
    search: async ({ query, count, range, signal }) => {
      if (section.api_base === "") throw new SearchError("no SearXNG URL provided");
      const url = new URL(`${section.api_base.replace(/\/+$/, "")}/search`);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      url.searchParams.set("categories", "general");
      if (range !== "") url.searchParams.set("time_range", RANGE_WORDS[range]);
      const answer = await call(http, { url, headers: { accept: "application/json" } }, signal, section.timeout_seconds, "tools.web.searxng.timeout_seconds");
      if (answer.status !== 200) throw new SearchError(`SearXNG returned status ${answer.status}`);
      const results = list(jsonOf(answer), "results").slice(0, count);
      if (results.length === 0) return `No results for: ${query}`;
      // PicoClaw's SearXNG text: every line ends with a newline, the last one too.
      let out = `Results for: ${query} (via SearXNG)\n`;
      for (const [index, item] of results.entries()) {
        out += `${index + 1}. ${text(item, "title")}\n   ${text(item, "url")}\n`;
        const content = text(item, "content");
        if (content !== "") out += `   ${content}\n`;
      }
      return out;
    },
  };
}
