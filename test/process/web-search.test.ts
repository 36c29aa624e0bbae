/**
 * web_search through the gateway, as a model calls it, against a fake
 * server per provider on 127.0.0.1 that speaks that provider's real answer
 * (Brave's web.results, Tavily's results, DuckDuckGo's HTML page, SearXNG's
 * JSON, Perplexity's chat completion): the request each provider is sent,
 * PicoClaw's result lines, its errors (refused keys, failing servers, bad
 * JSON, time limits) as error results the model can act on, key rotation,
 * and the tool offered only when a provider is ready.
 */
import { copyFileSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/house.js";
import { listenForTest } from "../support/listen.js";
import { type Harness, harness, recordingLogger, writeProject } from "../support/project.js";

interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

async function provider(answer: (seen: Seen, res: ServerResponse) => void) {
  const requests: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const seen = { method: req.method ?? "", url: new URL(req.url ?? "/", "http://fake"), headers: req.headers, body };
      requests.push(seen);
      answer(seen, res);
    });
  });
  return { url: await listenForTest(server), requests };
}

const json = (status: number, value: unknown) => (_seen: Seen, res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(typeof value === "string" ? value : JSON.stringify(value));
};

const gateway = (web: Record<string, unknown>) => harness({ config: { tools: { web } } });

/** One web_search call as a turn: the result the model got, whether it is an error, and what the user was shown. */
async function search(h: Harness, args: Record<string, unknown>) {
  const session = `s${Math.random().toString(36).slice(2, 8)}`;
  const { json: answer } = await h.chat({ message: `CALL web_search ${JSON.stringify(args)}`, session });
  const tool = (await h.runtime.historyOf(`agent:main:http:${session}`)).find((m) => m.role === "tool")!;
  const shown = (answer.delivered as { from: string; text: string }[]).filter((d) => d.from === "web_search").map((d) => d.text);
  return { text: tool.content as string, error: (tool as { is_error?: boolean }).is_error === true, shown };
}

const offered = (h: Harness) => h.runtime.toolOverview().some((tool) => tool.name === "web_search");

/** Brave's web search answer, as its API sends it (fields PicoClaw does not read included). */
const BRAVE_ANSWER = {
  type: "search",
  query: { original: "tide tables", more_results_available: true },
  mixed: { type: "mixed", main: [{ type: "web", index: 0, all: false }] },
  web: {
    type: "search",
    family_friendly: true,
    results: [
      {
        title: "Tide Tables for the Harbour",
        url: "https://tides.example/harbour",
        is_source_local: false,
        description: "Daily <strong>tide</strong> times and heights.",
        page_age: "2024-05-01T00:00:00",
        language: "en",
        type: "search_result",
        subtype: "generic",
        meta_url: { scheme: "https", netloc: "tides.example", hostname: "tides.example", path: "› harbour" },
      },
      { title: "Moon and tides", url: "https://moon.example/", description: "", type: "search_result" },
      { title: "Third", url: "https://third.example/", description: "c", type: "search_result" },
    ],
  },
};

describe("web_search asks its provider and answers in PicoClaw's lines", () => {
  it("Brave: GET with q, count, freshness and the key in X-Subscription-Token; lines without a via", async () => {
    const brave = await provider(json(200, BRAVE_ANSWER));
    const h = gateway({ brave: { enabled: true, api_key: "brave-key-123456", api_base: `${brave.url}/res/v1/web/search` } });
    const result = await search(h, { query: "  tide tables ", count: 2, range: "W" });
    expect(result).toEqual({
      error: false,
      text: "Results for: tide tables\n1. Tide Tables for the Harbour\n   https://tides.example/harbour\n   Daily <strong>tide</strong> times and heights.\n2. Moon and tides\n   https://moon.example/",
      shown: [result.text],
    });
    const [seen] = brave.requests;
    expect(seen!.method).toBe("GET");
    expect(seen!.url.pathname).toBe("/res/v1/web/search");
    expect(Object.fromEntries(seen!.url.searchParams)).toEqual({ q: "tide tables", count: "2", freshness: "pw" });
    expect(seen!.headers["x-subscription-token"]).toBe("brave-key-123456");
    expect(seen!.headers.accept).toBe("application/json");
  });

  it("count past max_results (or out of 1-10) is max_results", async () => {
    const brave = await provider(json(200, BRAVE_ANSWER));
    const h = gateway({ brave: { enabled: true, api_key: "brave-key-123456", api_base: brave.url, max_results: 3 } });
    await search(h, { query: "q", count: 9 });
    await search(h, { query: "q", count: 50 });
    await search(h, { query: "q" });
    expect(brave.requests.map((r) => r.url.searchParams.get("count"))).toEqual(["3", "3", "3"]);
  });

  it("Tavily: POST JSON with the key, search depth, max_results and time_range; lines via Tavily", async () => {
    const tavily = await provider(
      json(200, {
        query: "rust async",
        follow_up_questions: null,
        answer: null,
        images: [],
        results: [
          { title: "Async in Rust", url: "https://rust.example/async", content: "Futures and executors.", score: 0.97, raw_content: null },
          { title: "Tokio", url: "https://tokio.example/", content: "", score: 0.9, raw_content: null },
        ],
        response_time: 1.02,
      }),
    );
    const h = gateway({ tavily: { enabled: true, api_keys: ["tvly-key-abcdef"], api_base: `${tavily.url}/search` } });
    const result = await search(h, { query: "rust async", range: "m" });
    expect(result.text).toBe(
      "Results for: rust async (via Tavily)\n1. Async in Rust\n   https://rust.example/async\n   Futures and executors.\n2. Tokio\n   https://tokio.example/",
    );
    const [seen] = tavily.requests;
    expect(seen!.method).toBe("POST");
    expect(seen!.url.pathname).toBe("/search");
    expect(JSON.parse(seen!.body)).toEqual({
      api_key: "tvly-key-abcdef",
      query: "rust async",
      search_depth: "advanced",
      include_answer: false,
      include_images: false,
      include_raw_content: false,
      max_results: 5,
      time_range: "month",
    });
  });

  it("DuckDuckGo: its HTML page read with a parser, redirects unwrapped, ads left out; lines via DuckDuckGo", async () => {
    const page = `<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
  <div class="links_main links_deep result__body"><h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example">Buy tides</a></h2>
  <a class="result__snippet" href="https://duckduckgo.com/y.js">An ad.</a></div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fx%3D1%26y%3D2&amp;rut=abc">Example <b>Domain</b></a></h2>
    <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F">example.com</a></div></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2F">This domain is for use in <b>illustrative</b>
       examples &amp; docs.</a>
  </div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://direct.example/">Direct link</a></h2>
  </div></div>
</div></body></html>`;
    const ddg = await provider((_seen, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=UTF-8" });
      res.end(page);
    });
    const h = gateway({ duckduckgo: { enabled: true, api_base: `${ddg.url}/html/` } });
    const result = await search(h, { query: "example", range: "d" });
    expect(result.text).toBe(
      "Results for: example (via DuckDuckGo)\n1. Example Domain\n   https://example.com/a?x=1&y=2\n   This domain is for use in illustrative examples & docs.\n2. Direct link\n   https://direct.example/",
    );
    expect(ddg.requests[0]!.url.pathname).toBe("/html/");
    expect(Object.fromEntries(ddg.requests[0]!.url.searchParams)).toEqual({ q: "example", df: "d" });
  });

  it("SearXNG: GET <base>/search as JSON, general category, time_range; PicoClaw's lines, each ending in a newline", async () => {
    const searx = await provider(
      json(200, {
        query: "zig",
        number_of_results: 0,
        results: [
          {
            url: "https://ziglang.example/",
            title: "Zig",
            content: "A language.",
            engine: "duckduckgo",
            parsed_url: ["https", "ziglang.example", "/", "", "", ""],
            template: "default.html",
            engines: ["duckduckgo", "brave"],
            positions: [1, 2],
            score: 3.5,
            category: "general",
          },
          { url: "https://b.example/", title: "B", content: "", engine: "brave", score: 1, category: "general" },
        ],
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      }),
    );
    const h = gateway({ searxng: { enabled: true, api_base: `${searx.url}/` } });
    const result = await search(h, { query: "zig", range: "y" });
    expect(result.text).toBe("Results for: zig (via SearXNG)\n1. Zig\n   https://ziglang.example/\n   A language.\n2. B\n   https://b.example/\n");
    expect(searx.requests[0]!.url.pathname).toBe("/search");
    expect(Object.fromEntries(searx.requests[0]!.url.searchParams)).toEqual({ q: "zig", format: "json", categories: "general", time_range: "year" });
  });

  it("Perplexity: a sonar chat completion with the bearer key and recency filter; its answer via Perplexity", async () => {
    const content = "1. Sonar docs\n   https://docs.example/sonar\n   How sonar searches.";
    const pplx = await provider(
      json(200, {
        id: "b1f0",
        model: "sonar",
        created: 1_720_000_000,
        usage: { prompt_tokens: 40, completion_tokens: 30, total_tokens: 70 },
        citations: ["https://docs.example/sonar"],
        object: "chat.completion",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content }, delta: { role: "assistant", content: "" } }],
      }),
    );
    const h = gateway({ perplexity: { enabled: true, api_key: "pplx-key-0987654", api_base: pplx.url } });
    const result = await search(h, { query: "sonar", count: 3, range: "d" });
    expect(result.text).toBe(`Results for: sonar (via Perplexity)\n${content}`);
    const [seen] = pplx.requests;
    expect(seen!.url.pathname).toBe("/chat/completions");
    expect(seen!.headers.authorization).toBe("Bearer pplx-key-0987654");
    const body = JSON.parse(seen!.body);
    expect(body).toMatchObject({ model: "sonar", max_tokens: 1000, search_recency_filter: "day" });
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    expect(body.messages[1].content).toContain("sonar");
  });

  it("no results, in PicoClaw's words", async () => {
    const brave = await provider(json(200, { type: "search", web: { type: "search", results: [] } }));
    const h = gateway({ brave: { enabled: true, api_key: "brave-key-123456", api_base: brave.url } });
    expect(await search(h, { query: "nothing here" })).toMatchObject({ error: false, text: "No results for: nothing here" });
  });

  it("an empty query or a bad range is an error result before anything is sent", async () => {
    const brave = await provider(json(200, BRAVE_ANSWER));
    const h = gateway({ brave: { enabled: true, api_key: "brave-key-123456", api_base: brave.url } });
    expect(await search(h, { query: "   " })).toMatchObject({ error: true, text: "query is required" });
    expect(await search(h, { query: "q", range: "decade" })).toMatchObject({ error: true, text: "range must be one of: d, w, m, y" });
    expect(brave.requests).toEqual([]);
  });
});

describe("web_search's provider errors are results the model can act on", () => {
  it("a refused key (401), after every key was tried", async () => {
    const brave = await provider(json(401, { type: "ErrorResponse", error: { status: 401, code: "SUBSCRIPTION_TOKEN_INVALID", detail: "bad token" } }));
    const h = gateway({ brave: { enabled: true, api_keys: ["brave-key-1111", "brave-key-2222"], api_base: brave.url } });
    const result = await search(h, { query: "q" });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/^search failed: all api keys failed, last error: API error \(status 401\): \{"type":"ErrorResponse"/);
    expect(brave.requests.map((r) => r.headers["x-subscription-token"])).toEqual(["brave-key-1111", "brave-key-2222"]);
  });

  it("rotation: a rate-limited key (429) gives way to the next; the next search starts with the next key", async () => {
    const tavily = await provider((seen, res) => {
      const key = JSON.parse(seen.body).api_key;
      if (key === "tvly-first-key" && tavily.requests.length === 1) json(429, { detail: { error: "rate limited" } })(seen, res);
      // The title says which key asked (a key itself would be scrubbed from the result: it is a secret).
      else json(200, { results: [{ title: `by the ${key.split("-")[1]} key`, url: "https://x.example/", content: "" }] })(seen, res);
    });
    const h = gateway({ tavily: { enabled: true, api_key: "tvly-first-key", api_keys: ["tvly-second-key"], api_base: tavily.url } });
    expect((await search(h, { query: "q" })).text).toBe("Results for: q (via Tavily)\n1. by the second key\n   https://x.example/");
    expect((await search(h, { query: "q" })).text).toContain("by the second key");
    expect((await search(h, { query: "q" })).text).toContain("by the first key");
    expect(tavily.requests.map((r) => JSON.parse(r.body).api_key)).toEqual(["tvly-first-key", "tvly-second-key", "tvly-second-key", "tvly-first-key"]);
  });

  it("a 400 is not rotated: the answer is the error at once", async () => {
    const pplx = await provider(json(400, { error: { message: "bad model", type: "invalid_model" } }));
    const h = gateway({ perplexity: { enabled: true, api_keys: ["pplx-aaaa-1111", "pplx-bbbb-2222"], api_base: pplx.url } });
    expect((await search(h, { query: "q" })).text).toBe('search failed: Perplexity API error: {"error":{"message":"bad model","type":"invalid_model"}}');
    expect(pplx.requests).toHaveLength(1);
  });

  it("a failing server (500)", async () => {
    const searx = await provider(json(500, "Internal Server Error"));
    const h = gateway({ searxng: { enabled: true, api_base: searx.url } });
    expect(await search(h, { query: "q" })).toMatchObject({ error: true, text: "search failed: SearXNG returned status 500" });
  });

  it("an answer that is not JSON", async () => {
    const searx = await provider(json(200, "<html>maintenance</html>"));
    const h = gateway({ searxng: { enabled: true, api_base: searx.url } });
    const result = await search(h, { query: "q" });
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/^search failed: failed to parse response: Unexpected token/);
  });

  it("a server that does not answer in time (timeout_seconds), naming the key", async () => {
    const brave = await provider(() => {});
    const h = gateway({ brave: { enabled: true, api_key: "brave-key-123456", api_base: brave.url, timeout_seconds: 1 } });
    expect((await search(h, { query: "q" })).text).toBe(
      "search failed: all api keys failed, last error: request failed: no answer within 1 s (tools.web.brave.timeout_seconds)",
    );
  });

  it("a server that cannot be reached", async () => {
    const h = gateway({ duckduckgo: { enabled: true, api_base: "http://127.0.0.1:9/html/" } });
    expect((await search(h, { query: "q" })).text).toMatch(/^search failed: request failed: .*ECONNREFUSED/);
  });

  it("a key the server echoes back is scrubbed from the result", async () => {
    const brave = await provider((seen, res) => json(422, { error: `token ${seen.headers["x-subscription-token"]} lacks this plan` })(seen, res));
    const h = gateway({ brave: { enabled: true, api_keys: ["brave-secret-key-42"], api_base: brave.url } });
    const result = await search(h, { query: "q" });
    expect(result.text).toBe('search failed: API error (status 422): {"error":"token *** lacks this plan"}');
  });
});

describe("web_search is offered when a provider is ready", () => {
  it("not with the defaults, nor with a provider enabled without its key (a warning says so), nor with tools.web.enabled false", () => {
    expect(offered(gateway({}))).toBe(false);
    const keyless = gateway({ brave: { enabled: true } });
    expect(offered(keyless)).toBe(false);
    expect(keyless.warnings).toContain("tools.web: web_search is not offered: no enabled provider has its api_key (or, for searxng, its api_base)");
    expect(offered(gateway({ searxng: { enabled: true } }))).toBe(false);
    expect(offered(gateway({ enabled: false, duckduckgo: { enabled: true } }))).toBe(false);
    expect(offered(gateway({ duckduckgo: { enabled: true } }))).toBe(true);
  });

  it("PICOCLAW_TOOLS_WEB_ENABLED switches it, as in PicoClaw", () => {
    const h = harness({ config: { tools: { web: { duckduckgo: { enabled: true } } } }, env: { PICOCLAW_TOOLS_WEB_ENABLED: "false" } });
    expect(offered(h)).toBe(false);
  });

  it("auto takes the first ready provider in PicoClaw's order; a named one when it is ready", async () => {
    const brave = await provider(json(200, BRAVE_ANSWER));
    const ddg = await provider((_seen, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>"));
    const both = { brave: { enabled: true, api_key: "brave-key-123456", api_base: brave.url }, duckduckgo: { enabled: true, api_base: ddg.url } };
    await search(gateway(both), { query: "q" });
    expect([brave.requests.length, ddg.requests.length]).toEqual([1, 0]);
    const named = await search(gateway({ ...both, provider: "duckduckgo" }), { query: "q" });
    expect(named.text).toBe("No results found or extraction failed. Query: q");
    expect([brave.requests.length, ddg.requests.length]).toEqual([1, 1]);
  });
});

describe("PicoClaw's example config", () => {
  it("loads: its providers we do not have, prefer_native and proxy are notes, never errors; web_fetch is on and web_search off (its one enabled provider, sogou, is not here)", () => {
    const dir = writeProject({});
    copyFileSync(path.resolve(import.meta.dirname, "..", "fixtures", "picoclaw", "config.example.json"), path.join(dir, "picoclaw.config.json"));
    const loaded = loadConfig({ env: {}, cwd: dir });
    expect(loaded.warnings).toContain(
      "tools.web: kagi, sogou, gemini, glm_search, baidu_search: PicoClaw's search providers, not in PicoClaw-TS (it has perplexity, brave, searxng, tavily, duckduckgo); ignored (sogou was enabled)",
    );
    expect(loaded.warnings.some((w) => w.startsWith("tools.web: prefer_native is PicoClaw's"))).toBe(true);
    expect(loaded.warnings.join("\n")).not.toMatch(/tools: .*\bweb\b.*PicoClaw's own tools/);
    const { runtime } = bootstrap(loaded, { logger: recordingLogger() });
    onTestFinished(() => runtime.close(0));
    expect(runtime.toolOverview().filter((t) => t.name.startsWith("web_"))).toEqual([{ name: "web_fetch", origin: "the built-in tools", enabled: true }]);
  });
});
