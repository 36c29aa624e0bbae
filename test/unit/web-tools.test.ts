/**
 * The web tools' pure parts: which addresses web_fetch may reach and what
 * the allow lists let through, the check of a URL before any DNS, what a
 * body becomes (HTML as Markdown or text, JSON, charsets, binary), the
 * DuckDuckGo page and PicoClaw's result lines, key rotation order, and the
 * config: PicoClaw's tools.web read as ours, the keys that are secrets.
 */
import { describe, expect, it } from "vitest";
import { AllowList, refusedAddress } from "../../src/features/web/addresses.js";
import { BinaryBody, extract } from "../../src/features/web/extract.js";
import { refusal } from "../../src/features/web/guard.js";
import { htmlToMarkdown, htmlToText } from "../../src/features/web/html.js";
import { webFromPicoclaw } from "../../src/features/web/picoclaw.js";
import { duckduckgoResults } from "../../src/features/web/search/duckduckgo.js";
import { KeyPool, resultLines } from "../../src/features/web/search/provider.js";
import { loadConfig } from "../../src/house.js";
import { problemsOf, sectionAt, writeProject } from "../support/project.js";

describe("which addresses web_fetch may connect to", () => {
  it("refuses every range that is not ordinary public unicast, IPv4 and IPv6, naming it", () => {
    const refused: [string, string][] = [
      ["127.0.0.1", "a loopback address"],
      ["127.255.1.2", "a loopback address"],
      ["10.0.0.1", "a private network address"],
      ["172.16.5.4", "a private network address"],
      ["172.31.255.255", "a private network address"],
      ["192.168.0.1", "a private network address"],
      ["169.254.169.254", "a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
      ["100.64.0.1", "a carrier-grade NAT address (100.64.0.0/10)"],
      ["100.127.255.254", "a carrier-grade NAT address (100.64.0.0/10)"],
      ["0.0.0.0", "an unspecified (0.0.0.0/8) address"],
      ["0.1.2.3", "an unspecified (0.0.0.0/8) address"],
      ["198.18.0.1", "a reserved or benchmarking address"],
      ["198.19.255.1", "a reserved or benchmarking address"],
      ["224.0.0.251", "a multicast address"],
      ["239.1.1.1", "a multicast address"],
      ["255.255.255.255", "the broadcast address"],
      ["::1", "a loopback address"],
      ["::", "the unspecified address"],
      ["fc00::1", "a unique local address (fc00::/7)"],
      ["fd12:3456::1", "a unique local address (fc00::/7)"],
      ["fe80::1", "a link-local address (fe80::/10)"],
      ["ff02::1", "a multicast address"],
      ["::ffff:10.0.0.1", "the IPv4-mapped IPv6 form of 10.0.0.1, a private network address"],
      ["::ffff:169.254.169.254", "the IPv4-mapped IPv6 form of 169.254.169.254, a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
      ["64:ff9b::a00:1", "the NAT64 IPv6 form of 10.0.0.1, a private network address"],
      ["2002:7f00:1::1", "the 6to4 IPv6 form of 127.0.0.1, a loopback address"],
      ["2002:a9fe:a9fe::1", "the 6to4 IPv6 form of 169.254.169.254, a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
      // Teredo carries the client's address inverted: 10.0.0.1 is f5ff:fffe.
      ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "the Teredo IPv6 form of 10.0.0.1, a private network address"],
      ["::7f00:1", "an IPv4-compatible IPv6 address"],
    ];
    for (const [address, why] of refused) expect(refusedAddress(address), address).toBe(why);
  });

  it("lets public addresses through, and public IPv4 wrapped in IPv6", () => {
    for (const address of [
      "8.8.8.8",
      "93.184.216.34",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "2002:808:808::1",
      "64:ff9b::808:808",
    ]) {
      expect(refusedAddress(address), address).toBeUndefined();
    }
  });

  it("the allow lists: allow_hosts by name or address (with a port, that port only), private_host_whitelist by range on any port", () => {
    const allow = new AllowList(["nas.lan", "127.0.0.1:8080", "[fd00::5]"], ["192.168.0.0/16", "10.1.2.3"]);
    expect(allow.allowsHost("NAS.lan.", 443)).toBe(true);
    expect(allow.allowsHost("other.lan", 443)).toBe(false);
    expect(allow.allowsAddress("127.0.0.1", 8080)).toBe(true);
    expect(allow.allowsAddress("::ffff:127.0.0.1", 8080)).toBe(true);
    expect(allow.allowsAddress("127.0.0.1", 8081)).toBe(false);
    expect(allow.allowsAddress("fd00::5", 1)).toBe(true);
    expect(allow.allowsAddress("192.168.44.1", 22)).toBe(true);
    expect(allow.allowsAddress("10.1.2.3", 80)).toBe(true);
    expect(allow.allowsAddress("10.1.2.4", 80)).toBe(false);
  });
});

describe("the check of a URL before any DNS", () => {
  const none = new AllowList([], []);
  const check = (url: string, allow = none) => refusal(new URL(url), allow);

  it("http and https only, a host required, in PicoClaw's words", () => {
    expect(check("file:///etc/passwd")).toBe("only http/https URLs are allowed");
    expect(check("javascript:alert(1)")).toBe("only http/https URLs are allowed");
    expect(check("https://example.com/")).toBeUndefined();
  });

  it("localhost, names under it and literal private addresses in any spelling the URL parser reads", () => {
    for (const url of [
      "http://localhost:3000/",
      "http://LOCALHOST./",
      "http://a.b.localhost/",
      "http://0x7f000001/",
      "http://017700000001/",
      "http://127.1/",
      "http://[::ffff:a00:1]/",
    ]) {
      expect(check(url), url).toMatch(/^fetching private or local network hosts is not allowed: /);
    }
  });

  it("what the allow list names passes", () => {
    expect(check("http://localhost:3000/", new AllowList(["localhost:3000"], []))).toBeUndefined();
    expect(check("http://127.0.0.1:3000/", new AllowList(["127.0.0.1"], []))).toBeUndefined();
    expect(check("http://10.0.0.8/", new AllowList([], ["10.0.0.0/8"]))).toBeUndefined();
  });
});

const PAGE = `<!doctype html><html><head><title>Lighthouse keeping</title><script>track()</script></head><body>
<nav><a href="/">Home</a></nav>
<article><h1>Lighthouse keeping</h1>
<p>Keeping a light means trimming the wick, winding the clockwork and watching the weather through every night of the season, from dusk until the dawn comes up over the water again.</p>
<p>See the <a href="../log/1890">keeper's log</a>, the <a href="javascript:void(0)">menu</a> and <img src="/img/lamp.png" alt="the lamp">.</p>
<pre><code>lamp.on()</code></pre>
<p>The work was lonely &amp; hard, and the keepers wrote down the ships they saw, the storms they weathered and the oil they burned, night after night, for decades.</p>
</article></body></html>`;

describe("what web_fetch makes of a page", () => {
  it("HTML as Markdown: the title, the article, links made absolute, javascript: links without a target, no scripts", () => {
    const text = htmlToMarkdown(PAGE, "https://lights.example/stories/keeping");
    expect(text).toMatch(/^# Lighthouse keeping\n/);
    expect(text).toContain("[keeper's log](https://lights.example/log/1890)");
    expect(text).toContain("![the lamp](https://lights.example/img/lamp.png)");
    expect(text).not.toContain("javascript:");
    expect(text).toContain("```\nlamp.on()\n```");
    expect(text).toContain("lonely & hard");
    expect(text).not.toContain("track()");
  });

  it("HTML as plain text: a line per block, entities decoded, nothing of the markup", () => {
    const text = htmlToText(PAGE, "https://lights.example/");
    expect(text.split("\n")[0]).toBe("Lighthouse keeping");
    expect(text).toContain("See the keeper's log, the menu and .");
    expect(text).toContain("lonely & hard");
    expect(text).not.toMatch(/[<>]|track\(\)/);
  });

  it("a page too short for an article is read whole", () => {
    expect(htmlToMarkdown("<html><body><p>Just <em>one</em> line.</p></body></html>", "https://x.example/")).toBe("Just _one_ line.");
  });

  it("by its type: JSON pretty-printed (also +json), HTML sniffed without a type, text as it is, in the charset named", async () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    expect(await extract(bytes('{"a":1}'), "application/problem+json", "markdown", "https://x/")).toEqual({ extractor: "json", text: '{\n  "a": 1\n}' });
    expect((await extract(bytes("<!DOCTYPE html><p>hi</p>"), undefined, "plaintext", "https://x/")).extractor).toBe("text");
    expect(await extract(bytes("a\tb"), "text/csv", "markdown", "https://x/")).toEqual({ extractor: "raw", text: "a\tb" });
    expect(await extract(Uint8Array.from([0x63, 0x61, 0x66, 0xe9]), "text/plain; charset=ISO-8859-1", "markdown", "https://x/")).toEqual({
      extractor: "raw",
      text: "café",
    });
  });

  it("binary bodies are refused, by type or by their bytes", async () => {
    await expect(extract(new Uint8Array([1, 2, 3]), "application/pdf", "markdown", "https://x/")).rejects.toThrow(BinaryBody);
    await expect(extract(new Uint8Array([0x41, 0, 0x42]), "text/plain", "markdown", "https://x/")).rejects.toThrow(/not text \(text\/plain, 3 bytes\)/);
  });
});

describe("web_search's parts", () => {
  it("PicoClaw's result lines: the header with its provider, numbered items, snippets when there are any, at most count", () => {
    const items = [
      { title: "A", url: "https://a/", snippet: "about a" },
      { title: "B", url: "https://b/", snippet: "" },
      { title: "C", url: "https://c/", snippet: "c" },
    ];
    expect(resultLines("q", "Tavily", items, 2)).toBe("Results for: q (via Tavily)\n1. A\n   https://a/\n   about a\n2. B\n   https://b/");
    expect(resultLines("q", undefined, items.slice(0, 1), 5)).toBe("Results for: q\n1. A\n   https://a/\n   about a");
    expect(resultLines("q", "Tavily", [], 5)).toBe("No results for: q");
  });

  it("DuckDuckGo's page: each result's title, unwrapped target and snippet, in order, ads left out", async () => {
    const html = `<div class="result result--ad"><a class="result__a" href="https://duckduckgo.com/y.js?u=1">Ad</a></div>
      <div class="result web-result"><h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fone.example%2F&amp;rut=x">One &amp; <b>only</b></a></h2>
      <a class="result__snippet">First   snippet</a></div>
      <div class="result web-result"><a class="result__a" href="https://two.example/">Two</a></div>`;
    expect(await duckduckgoResults(html)).toEqual([
      { title: "One & only", url: "https://one.example/", snippet: "First snippet" },
      { title: "Two", url: "https://two.example/", snippet: "" },
    ]);
    expect(await duckduckgoResults("<html><body>blocked</body></html>")).toEqual([]);
  });

  it("keys are tried from the next one each search (PicoClaw's round robin)", () => {
    const pool = new KeyPool(["a", "b", "c"]);
    expect([pool.order(), pool.order(), pool.order(), pool.order()]).toEqual([
      ["a", "b", "c"],
      ["b", "c", "a"],
      ["c", "a", "b"],
      ["a", "b", "c"],
    ]);
    expect(new KeyPool([]).order()).toEqual([]);
  });
});

describe("the web tools' config", () => {
  const load = (config: unknown, env: Record<string, string> = {}) => loadConfig({ env, cwd: writeProject({ config }) });

  it("defaults: web_fetch on with 60 s and 5 redirects; 10 MiB, Markdown, nothing allowed; every provider off", () => {
    const { config } = load({});
    expect(sectionAt(config, "tools.web_fetch")).toEqual({ enabled: true, timeout_seconds: 60, max_redirects: 5 });
    expect(sectionAt(config, "tools.web")).toMatchObject({
      enabled: true,
      provider: "auto",
      fetch_limit_bytes: 10 * 1024 * 1024,
      format: "markdown",
      allow_hosts: [],
      private_host_whitelist: [],
    });
    for (const name of ["brave", "tavily", "duckduckgo", "searxng", "perplexity"]) expect(sectionAt(config, `tools.web.${name}.enabled`), name).toBe(false);
    expect(sectionAt(config, "tools.web.perplexity")).toMatchObject({ api_base: "https://api.perplexity.ai", timeout_seconds: 30, max_results: 5 });
  });

  it("refuses bad entries, naming their paths", () => {
    expect(problemsOf(() => load({ tools: { web: { allow_hosts: ["http://x/"], private_host_whitelist: ["10.0.0.0/33"], fetch_limit_bytes: 1 } } }))).toEqual([
      "tools.web.fetch_limit_bytes: must be >= 1024",
      "tools.web.allow_hosts[0]: expected a host name or address, optionally with :port, such as nas.lan or 127.0.0.1:8080",
      "tools.web.private_host_whitelist[0]: expected an IP address or a CIDR range, such as 192.168.1.10 or 10.0.0.0/8",
    ]);
  });

  it("PICOCLAW_TOOLS_WEB_ENABLED and PICOCLAW_TOOLS_WEB_FETCH_ENABLED set the switches", () => {
    const { config } = load({}, { PICOCLAW_TOOLS_WEB_ENABLED: "false", PICOCLAW_TOOLS_WEB_FETCH_ENABLED: "0" });
    expect(sectionAt(config, "tools.web.enabled")).toBe(false);
    expect(sectionAt(config, "tools.web_fetch.enabled")).toBe(false);
  });

  it("api_keys, api_key and secret URL parts are secrets", () => {
    const { secrets } = load({
      tools: {
        web: {
          brave: { api_key: "brave-one-key", api_keys: ["brave-two-key"] },
          perplexity: { api_keys: ["pplx-three-key"] },
          searxng: { api_base: "https://user:searx-password@searx.example/" },
        },
      },
    });
    for (const value of ["brave-one-key", "brave-two-key", "pplx-three-key", "searx-password"]) expect(secrets.has(value), value).toBe(true);
  });

  it("PicoClaw's tools.web: base_url is api_base, max_results 0 is 10, nulls are defaults, its own providers and keys are notes", () => {
    const notes: string[] = [];
    const read = webFromPicoclaw(
      {
        enabled: true,
        provider: "Kagi",
        prefer_native: true,
        proxy: "",
        tavily: { enabled: false, api_key: "", base_url: "", max_results: 0 },
        searxng: { enabled: true, base_url: "http://localhost:8888", max_results: 25 },
        kagi: { enabled: false },
        private_host_whitelist: null,
      },
      notes,
    );
    expect(read).toEqual({
      enabled: true,
      provider: "auto",
      tavily: { enabled: false, api_key: "", max_results: 10 },
      searxng: { enabled: true, api_base: "http://localhost:8888", max_results: 10 },
    });
    expect(notes).toEqual([
      "tools.web: prefer_native, proxy are PicoClaw's and not read here (web_search is always offered when a provider is ready; no proxy); ignored",
      "tools.web: kagi: PicoClaw's search providers, not in PicoClaw-TS (it has perplexity, brave, searxng, tavily, duckduckgo); ignored",
      'tools.web.provider: "kagi" is not a provider of PicoClaw-TS; auto is used',
    ]);
  });

  it("our own tools.web passes through PicoClaw's reader unchanged", () => {
    const ours = { provider: "brave", brave: { enabled: true, api_key: "k", api_base: "https://b.example/" }, allow_hosts: ["nas.lan"] };
    const notes: string[] = [];
    expect(webFromPicoclaw(ours, notes)).toEqual(ours);
    expect(notes).toEqual([]);
  });
});
