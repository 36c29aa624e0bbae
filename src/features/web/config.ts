import { z } from "zod";
import { urlSecrets } from "../../config/secrets.js";
import { hostRule, parseAddressRange } from "./addresses.js";

/**
 * The web tools' config (README, "web_fetch and web_search"): PicoClaw's
 * `tools.web_fetch` (web_fetch's switch, with our time limit and redirect
 * cap) and `tools.web` (web_search's switch and providers, and what both
 * tools share: the fetch size cap, the HTML format, the allow lists).
 */

const MIB = 1024 * 1024;

const seconds = (fallback: number, what: string) => z.int().min(1).max(600).default(fallback).describe(what);

export const webFetchSection = z
  .strictObject({
    enabled: z.boolean().default(true),
    timeout_seconds: seconds(60, "Time one fetch may take, redirects and reading the body included; past it the fetch stops with an error result."),
    max_redirects: z
      .int()
      .min(0)
      .max(20)
      .default(5)
      .describe("Redirects one fetch follows at most; one more is refused. Each target is checked like the first URL."),
  })
  .prefault({});

export type WebFetchSection = z.output<typeof webFetchSection>;

const keys = z
  .array(z.string())
  .max(100)
  .default([])
  .describe("Keys used in turn: the next one is tried when a key is refused (401, 403), rate limited (429) or the server fails (5xx).");

const maxResults = z.int().min(1).max(10).default(5).describe("Results per search at most (1-10); a call's `count` may ask for fewer.");

const base = (fallback: string, what: string) =>
  z
    .string()
    .refine((text) => text === "" || isHttpUrl(text), "expected an http(s) URL")
    .default(fallback)
    .describe(what);

const isHttpUrl = (text: string) => URL.canParse(text) && ["http:", "https:"].includes(new URL(text).protocol);

const withKeys = (name: string, api: string, timeout: number) =>
  z
    .strictObject({
      enabled: z.boolean().default(false),
      api_key: z.string().default("").describe(`Secret: the ${name} API key; write "\${VAR}".`),
      api_keys: keys,
      max_results: maxResults,
      api_base: base(api, `Where ${name} is asked.`),
      timeout_seconds: seconds(timeout, `Time one ${name} call may take.`),
    })
    .prefault({});

export const braveSection = withKeys("Brave Search", "https://api.search.brave.com/res/v1/web/search", 10);
export const tavilySection = withKeys("Tavily", "https://api.tavily.com/search", 10);
export const perplexitySection = withKeys("Perplexity", "https://api.perplexity.ai", 30);

export const duckduckgoSection = z
  .strictObject({
    enabled: z.boolean().default(false),
    max_results: maxResults,
    api_base: base("https://html.duckduckgo.com/html/", "The DuckDuckGo HTML page that is read for results."),
    timeout_seconds: seconds(10, "Time one DuckDuckGo call may take."),
  })
  .prefault({});

export const searxngSection = z
  .strictObject({
    enabled: z.boolean().default(false),
    api_base: base("", "The SearXNG instance's root URL (its JSON API is <api_base>/search?format=json); required."),
    max_results: maxResults,
    timeout_seconds: seconds(10, "Time one SearXNG call may take."),
  })
  .prefault({});

export const PROVIDER_NAMES = ["perplexity", "brave", "searxng", "tavily", "duckduckgo"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export const webSection = z
  .strictObject({
    enabled: z.boolean().default(true).describe("web_search: offered when this is on and a provider is ready."),
    provider: z
      .enum(["auto", ...PROVIDER_NAMES])
      .default("auto")
      .describe("The search provider; auto: the first ready one of perplexity, brave, searxng, tavily, duckduckgo. A named one that is not ready is auto too."),
    brave: braveSection,
    tavily: tavilySection,
    duckduckgo: duckduckgoSection,
    searxng: searxngSection,
    perplexity: perplexitySection,
    fetch_limit_bytes: z
      .int()
      .min(1024)
      .max(64 * MIB)
      .default(10 * MIB)
      .describe("Bytes of a page web_fetch reads at most (1 KiB to 64 MiB); the rest is not read, and the result says it was cut."),
    format: z
      .enum(["markdown", "plaintext"])
      .default("markdown")
      .describe("What web_fetch makes of HTML: markdown (the readable part, with headings, lists and links) or plaintext (its text only)."),
    allow_hosts: z
      .array(
        z
          .string()
          .refine((entry) => hostRule(entry) !== undefined, "expected a host name or address, optionally with :port, such as nas.lan or 127.0.0.1:8080"),
      )
      .default([])
      .describe(
        "Hosts web_fetch may reach even on a private or loopback address: a name (what it resolves to is not checked) or an address, optionally with :port (that port only).",
      ),
    private_host_whitelist: z
      .array(z.string().refine((entry) => parseAddressRange(entry) !== undefined, "expected an IP address or a CIDR range, such as 192.168.1.10 or 10.0.0.0/8"))
      .default([])
      .describe("PicoClaw's: IP addresses and CIDR ranges web_fetch may reach although they are private, on any port."),
  })
  .prefault({});

export type WebSection = z.output<typeof webSection>;

/** A provider's keys: `api_key` and `api_keys` together, each once, in order. */
export function keysOf(section: { api_key: string; api_keys: readonly string[] }): string[] {
  return [...new Set([section.api_key, ...section.api_keys].map((key) => key.trim()).filter((key) => key !== ""))];
}

/** The secrets of `tools.web` that are not found by their key's name: the `api_keys`, and passwords or secret parameters in the base URLs. */
export function webSecrets(section: WebSection): string[] {
  const found: string[] = [];
  const add = (value: string) => found.push(value);
  for (const provider of [section.brave, section.tavily, section.perplexity]) for (const key of keysOf(provider)) add(key);
  for (const provider of [section.brave, section.tavily, section.perplexity, section.duckduckgo, section.searxng]) urlSecrets(provider.api_base, add);
  return found;
}
