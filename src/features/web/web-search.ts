import { z } from "zod";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import { PROVIDER_NAMES, type ProviderName, type WebSection, keysOf } from "./config.js";
import { braveProvider } from "./search/brave.js";
import { duckduckgoProvider } from "./search/duckduckgo.js";
import { perplexityProvider } from "./search/perplexity.js";
import { type Range, type SearchHttp, type SearchProvider, SearchError } from "./search/provider.js";
import { searxngProvider } from "./search/searxng.js";
import { tavilyProvider } from "./search/tavily.js";

/**
 * `web_search`, PicoClaw's tool: `query`, `count`, `range` (d, w, m, y),
 * answered by one provider with PicoClaw's result text, for the model and
 * the user alike. `tools.web.provider` picks it when ready; `auto` takes
 * the first ready one in PicoClaw's order (perplexity, brave, searxng,
 * tavily, then duckduckgo). Offered only when one is ready.
 */

/** Whether a provider's section says it can be asked: enabled, with its key (or SearXNG's URL); DuckDuckGo needs neither. */
export function ready(section: WebSection, name: ProviderName): boolean {
  switch (name) {
    case "duckduckgo":
      return section.duckduckgo.enabled;
    case "searxng":
      return section.searxng.enabled && section.searxng.api_base.trim() !== "";
    default:
      return section[name].enabled && keysOf(section[name]).length > 0;
  }
}

/** The provider the tool asks: the named one when it is ready, else the first ready one in PicoClaw's order; undefined when none is. */
export function chosenProvider(section: WebSection): ProviderName | undefined {
  if (section.provider !== "auto" && ready(section, section.provider)) return section.provider;
  return PROVIDER_NAMES.find((name) => ready(section, name));
}

export function makeProvider(section: WebSection, name: ProviderName, http: SearchHttp): SearchProvider {
  switch (name) {
    case "brave":
      return braveProvider(section.brave, http);
    case "tavily":
      return tavilyProvider(section.tavily, http);
    case "perplexity":
      return perplexityProvider(section.perplexity, http);
    case "searxng":
      return searxngProvider(section.searxng, http);
    case "duckduckgo":
      return duckduckgoProvider(section.duckduckgo, http);
  }
}

const parameters = z.strictObject({
  query: z.string().describe("Search query"),
  count: z.int().optional().describe("Number of results (1-10; default and most: the provider's max_results)"),
  range: z.string().optional().describe("Optional time filter: d (day), w (week), m (month), y (year)"),
});

export function webSearchTool(provider: SearchProvider): Tool {
  return defineTool({
    name: "web_search",
    description:
      "Search the web for current information: returns titles, URLs and snippets of the results. Takes a query, how many results (count) and an optional time range (range: d, w, m or y). Read a result in full with web_fetch.",
    parameters,
    enabledByDefault: true,
    // Each call to the provider has its own limit (tools.web.<provider>.timeout_seconds); the turn's end stops it too.
    timeoutMs: 0,
    execute: async (args, ctx) => {
      const query = args.query.trim();
      if (query === "") return toolResult.error("query is required");
      const count = args.count !== undefined && args.count >= 1 && args.count <= 10 ? Math.min(args.count, provider.maxResults) : provider.maxResults;
      const range = (args.range ?? "").trim().toLowerCase();
      if (!["", "d", "w", "m", "y"].includes(range)) return toolResult.error("range must be one of: d, w, m, y");
      try {
        const text = await provider.search({ query, count, range: range as Range, signal: ctx.signal });
        return toolResult.user(text);
      } catch (error) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        if (error instanceof SearchError) return toolResult.error(`search failed: ${error.message}`);
        throw error;
      }
    },
  });
}
