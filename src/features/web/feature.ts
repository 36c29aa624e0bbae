import type { Dispatcher } from "undici";
import { BUILT_IN_ORIGIN, type Feature, defineFeature } from "../../port/feature.js";
import type { AnyTool } from "../../tools/registry.js";
import { AllowList } from "./addresses.js";
import { webFetchSection, webSecrets, webSection } from "./config.js";
import { type Resolve, guardedConnector, systemResolve } from "./guard.js";
import { undici } from "./http.js";
import { webFromPicoclaw } from "./picoclaw.js";
import { webFetchTool } from "./web-fetch.js";
import { chosenProvider, makeProvider, webSearchTool } from "./web-search.js";

/**
 * The web tools (`tools.web_fetch`, `tools.web`): `web_fetch`, behind the
 * guard that keeps it off private and local networks, and `web_search`,
 * offered when a provider is ready. undici and the HTML reader are loaded
 * with the first call.
 */

export interface WebFeatureOptions {
  /** How web_fetch resolves names (default: the system's `dns.lookup`); tests answer with what they need. */
  resolve?: Resolve;
}

/** Connections are kept this long after their last answer. */
const KEEP_ALIVE_MS = 4_000;
/** Time a connection has to be made (PicoClaw's dial and TLS limits); the fetch's own limit is on top. */
const CONNECT_TIMEOUT_MS = 15_000;

export function createWebFeature(options: WebFeatureOptions = {}): Feature {
  const resolve = options.resolve ?? systemResolve;
  return defineFeature({
    name: "web",
    needs: ["timer"],
    config: {
      tools: { web_fetch: webFetchSection },
      sections: { "tools.web": webSection },
      secrets: (own) => webSecrets(own.sections["tools.web"]),
      fromPicoclaw: { "tools.web": webFromPicoclaw },
    },
    setup(host, config) {
      const web = config.sections["tools.web"];
      const fetchSection = config.tools.web_fetch;
      const made: Promise<Dispatcher>[] = [];
      const lazily = (make: (loaded: Awaited<ReturnType<typeof undici>>) => Dispatcher) => {
        let dispatcher: Promise<Dispatcher> | undefined;
        return () => {
          if (!dispatcher) {
            dispatcher = undici().then(make);
            made.push(dispatcher);
          }
          return dispatcher;
        };
      };
      // web_fetch is always there for the tool policy to switch (tools.web_fetch.enabled); web_search only when a provider is ready.
      const tools: AnyTool[] = [];
      {
        const allow = new AllowList(web.allow_hosts, web.private_host_whitelist);
        const guarded = lazily(
          ({ Agent, buildConnector }) =>
            new Agent({
              connect: guardedConnector(buildConnector({ timeout: CONNECT_TIMEOUT_MS }), allow, resolve),
              keepAliveTimeout: KEEP_ALIVE_MS,
              headersTimeout: 0,
              bodyTimeout: 0,
            }),
        );
        tools.push(webFetchTool({ fetch: fetchSection, web, allow, dispatcher: guarded, timer: host.timer }));
      }
      const chosen = web.enabled ? chosenProvider(web) : undefined;
      if (chosen) {
        // Search goes to the provider the operator configured, wherever it is (a SearXNG on the LAN): not through web_fetch's guard.
        const plain = lazily(({ Agent }) => new Agent({ keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: 0, bodyTimeout: 0 }));
        tools.push(webSearchTool(makeProvider(web, chosen, { dispatcher: plain, timer: host.timer })));
      }
      const warnings =
        web.enabled && !chosen && (web.brave.enabled || web.tavily.enabled || web.perplexity.enabled || web.searxng.enabled)
          ? ["tools.web: web_search is not offered: no enabled provider has its api_key (or, for searxng, its api_base)"]
          : [];
      return {
        origin: () => BUILT_IN_ORIGIN,
        tools,
        warnings,
        close: async () => {
          await Promise.all(made.map(async (dispatcher) => (await dispatcher).close()));
        },
      };
    },
  });
}

export const webFeature = createWebFeature();
