/**
 * web_fetch through the gateway, as a model calls it, against real HTTP
 * servers on 127.0.0.1: pages read as PicoClaw's result (HTML as Markdown,
 * JSON pretty-printed, text as it is, non-2xx a result like any other);
 * loopback, private, link-local and wrapped addresses refused unless
 * tools.web.allow_hosts lists them; redirects followed only to what may be
 * fetched and only up to the cap; a trickling server cut by the time limit,
 * an endless body by the size limit.
 */
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { listenForTest } from "../support/listen.js";
import { type Harness, harness } from "../support/project.js";
import { waitFor } from "../support/wait.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function site(handler: Handler): Promise<{ url: string; host: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    handler(req, res);
  });
  const url = await listenForTest(server);
  return { url, host: new URL(url).host, hits };
}

const page =
  (type: string, body: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": type });
    res.end(body);
  };

function gateway(web: Record<string, unknown> = {}, webFetch: Record<string, unknown> = {}) {
  return harness({ config: { tools: { web, web_fetch: webFetch } } });
}

/** One web_fetch call as a turn: the result the model got (parsed when it is PicoClaw's JSON), and what the user was shown. */
async function webFetch(h: Harness, args: Record<string, unknown>) {
  const session = `s${Math.random().toString(36).slice(2, 8)}`;
  const { json } = await h.chat({ message: `CALL web_fetch ${JSON.stringify(args)}`, session });
  const history = await h.runtime.historyOf(`agent:main:http:${session}`);
  const tool = history.find((m) => m.role === "tool")!;
  const text = tool.content as string;
  const error = (tool as { is_error?: boolean }).is_error === true;
  const shown = (json.delivered as { from: string; text: string }[]).filter((d) => d.from === "web_fetch").map((d) => d.text);
  // biome-ignore lint/suspicious/noExplicitAny: PicoClaw's result JSON
  const result: any = error ? undefined : JSON.parse(text);
  return { text, error, shown, result };
}

const ARTICLE = `<!doctype html><html><head><title>Tide tables</title><style>p{color:red}</style><script>alert("no")</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><article><h1>Tide tables</h1>
<p>The <b>high tide</b> at the harbour comes twice a day, and the times move later by about fifty minutes each day, as the moon rises later. Read the <a href="/tides/today">table for today</a> before you sail.</p>
<h2>Safety</h2><ul><li>Check the forecast</li><li>Tell someone your plan</li></ul>
<p>Spring tides come with the new and the full moon; neap tides with the quarters. The difference between them can be a metre or more in this bay, so plan the crossing with care &amp; patience.</p>
</article></main><footer>© the harbour office</footer></body></html>`;

describe("web_fetch reads a page it may reach", () => {
  it("HTML as Markdown: the readable part with its headings, lists and absolute links, no scripts or styles; the user told what was fetched", async () => {
    const s = await site(page("text/html; charset=utf-8", ARTICLE));
    const h = gateway({ allow_hosts: [s.host] });
    const { result, shown, error } = await webFetch(h, { url: `${s.url}/tides` });
    expect(error).toBe(false);
    expect(result).toMatchObject({ url: `${s.url}/tides`, status: 200, extractor: "markdown", truncated: false });
    expect(result.text).toMatch(/^# Tide tables/);
    expect(result.text).toContain("The **high tide** at the harbour");
    expect(result.text).toContain(`[table for today](${s.url}/tides/today)`);
    expect(result.text).toContain("## Safety");
    expect(result.text).toMatch(/^- +Check the forecast$/m);
    expect(result.text).toContain("care & patience");
    expect(result.text).not.toMatch(/alert|color:red|<\w/);
    expect(result.length).toBe(Array.from(result.text as string).length);
    expect(shown).toEqual([`Fetched ${Buffer.byteLength(result.text)} bytes from ${s.url}/tides (extractor: markdown, truncated: false)`]);
  });

  it("with format plaintext, the text of each block on a line of its own, entities decoded", async () => {
    const s = await site(page("text/html", ARTICLE));
    const h = gateway({ allow_hosts: [s.host], format: "plaintext" });
    const { result } = await webFetch(h, { url: s.url });
    expect(result.extractor).toBe("text");
    expect(result.text.split("\n")).toEqual(expect.arrayContaining(["Tide tables", "Safety", "Check the forecast", "Tell someone your plan"]));
    expect(result.text).toContain("care & patience");
    expect(result.text).not.toMatch(/[<>*#]/);
  });

  it("JSON pretty-printed, in PicoClaw's result JSON (its keys in Go's order); text and JSON that does not parse as they are", async () => {
    const s = await site((req, res) => {
      if (req.url === "/data") page("application/json", '{"b":[1,2],"a":{"c":"x"}}')(req, res);
      else if (req.url === "/broken") page("application/json", "{not json")(req, res);
      else page("text/plain", "line one\n  line two\n")(req, res);
    });
    const h = gateway({ allow_hosts: [s.host] });
    const json = await webFetch(h, { url: `${s.url}/data` });
    const pretty = '{\n  "b": [\n    1,\n    2\n  ],\n  "a": {\n    "c": "x"\n  }\n}';
    expect(json.text).toBe(
      JSON.stringify({ extractor: "json", length: pretty.length, status: 200, text: pretty, truncated: false, url: `${s.url}/data` }, null, 2),
    );
    expect((await webFetch(h, { url: `${s.url}/broken` })).result).toMatchObject({ extractor: "raw", text: "{not json" });
    expect((await webFetch(h, { url: `${s.url}/notes.txt` })).result).toMatchObject({ extractor: "raw", text: "line one\n  line two\n" });
  });

  it("a non-2xx answer is a result, not an error: its status and its text", async () => {
    const s = await site((_req, res) => {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("no such page");
    });
    const { result, error } = await webFetch(gateway({ allow_hosts: [s.host] }), { url: s.url });
    expect(error).toBe(false);
    expect(result).toMatchObject({ status: 404, extractor: "raw", text: "no such page" });
  });

  it("maxChars keeps that many characters, said in PicoClaw's words; 100 or less is ignored", async () => {
    const s = await site(page("text/plain", `${"é".repeat(300)}`));
    const h = gateway({ allow_hosts: [s.host] });
    const cut = await webFetch(h, { url: s.url, maxChars: 120 });
    expect(cut.result).toMatchObject({ truncated: true, text: `${"é".repeat(120)}\n[Content truncated due to size limit]` });
    expect(cut.result.length).toBe(120 + "\n[Content truncated due to size limit]".length);
    expect((await webFetch(h, { url: s.url, maxChars: 50 })).result).toMatchObject({ truncated: false, text: "é".repeat(300) });
  });

  it("a binary body is an error result saying what it is", async () => {
    const s = await site(page("image/png", "\x89PNG\r\n\x1a\n\0\0\0"));
    const result = await webFetch(gateway({ allow_hosts: [s.host] }), { url: s.url });
    expect(result).toMatchObject({ error: true });
    expect(result.text).toMatch(/^the response is not text \(image\/png, \d+ bytes\)/);
  });
});

describe("web_fetch refuses what is not on the public internet", () => {
  it("the same local page without the allow list: nothing is sent", async () => {
    const s = await site(page("text/plain", "secret"));
    const result = await webFetch(gateway(), { url: `${s.url}/admin` });
    expect(result).toMatchObject({ error: true, shown: [] });
    expect(result.text).toBe(
      `fetching private or local network hosts is not allowed: 127.0.0.1 is a loopback address (tools.web.allow_hosts lists hosts that may be reached)`,
    );
    expect(s.hits).toEqual([]);
  });

  it("an allow-list entry with a port allows that port only", async () => {
    const allowed = await site(page("text/plain", "ok"));
    const other = await site(page("text/plain", "other"));
    const h = gateway({ allow_hosts: [allowed.host] });
    expect((await webFetch(h, { url: allowed.url })).result.text).toBe("ok");
    expect((await webFetch(h, { url: other.url })).error).toBe(true);
    expect(other.hits).toEqual([]);
  });

  it("metadata, private, loopback, unspecified and IPv4-in-IPv6 addresses, and localhost, each with why", async () => {
    const h = gateway();
    const cases: [string, string][] = [
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
      ["http://10.1.2.3/", "10.1.2.3 is a private network address"],
      ["http://192.168.1.1:8080/", "192.168.1.1 is a private network address"],
      ["http://[::1]/", "[::1] is a loopback address"],
      ["http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1] is the IPv4-mapped IPv6 form of 127.0.0.1, a loopback address"],
      ["http://[fd00::1]/", "[fd00::1] is a unique local address (fc00::/7)"],
      ["http://0.0.0.0/", "0.0.0.0 is an unspecified (0.0.0.0/8) address"],
      ["http://2130706433/", "127.0.0.1 is a loopback address"],
      ["http://localhost/", "localhost is this machine"],
      ["http://api.localhost./", "api.localhost. is this machine"],
    ];
    for (const [url, why] of cases) {
      const result = await webFetch(h, { url });
      expect(result.error, url).toBe(true);
      expect(result.text, url).toBe(`fetching private or local network hosts is not allowed: ${why} (tools.web.allow_hosts lists hosts that may be reached)`);
    }
  });

  it("schemes other than http and https, in PicoClaw's words", async () => {
    const h = gateway();
    for (const url of ["file:///etc/passwd", "ftp://example.com/x", "gopher://example.com/"]) {
      expect(await webFetch(h, { url })).toMatchObject({ error: true, text: "only http/https URLs are allowed" });
    }
    expect(await webFetch(h, { url: "not a url" })).toMatchObject({ error: true, text: 'invalid URL: "not a url" is not a URL' });
  });

  it("PicoClaw's private_host_whitelist lets an address range through, on any port", async () => {
    const s = await site(page("text/plain", "whitelisted"));
    const h = gateway({ private_host_whitelist: ["127.0.0.0/8"] });
    expect((await webFetch(h, { url: s.url })).result.text).toBe("whitelisted");
  });
});

describe("web_fetch follows redirects only where it may go", () => {
  it("a relative and an absolute redirect are followed, and the page at the end is read", async () => {
    const s = await site((req, res) => {
      if (req.url === "/a") res.writeHead(302, { location: "/b" }).end();
      else if (req.url === "/b") res.writeHead(301, { location: `http://${req.headers.host}/c` }).end();
      else page("text/plain", `here: ${req.url}`)(req, res);
    });
    const { result } = await webFetch(gateway({ allow_hosts: [s.host] }), { url: `${s.url}/a` });
    expect(result).toMatchObject({ status: 200, text: "here: /c", url: `${s.url}/a` });
    expect(s.hits).toEqual(["/a", "/b", "/c"]);
  });

  it("a chain of 20 stops at the cap (5), one request past the first each", async () => {
    const s = await site((req, res) => {
      const n = Number(req.url!.slice(1));
      res.writeHead(302, { location: `/${n + 1}` }).end();
    });
    const result = await webFetch(gateway({ allow_hosts: [s.host] }), { url: `${s.url}/0` });
    expect(result).toMatchObject({ error: true, text: "stopped after 5 redirects (tools.web_fetch.max_redirects)" });
    expect(s.hits).toEqual(["/0", "/1", "/2", "/3", "/4", "/5"]);
    const capped = await webFetch(gateway({ allow_hosts: [s.host] }, { max_redirects: 0 }), { url: `${s.url}/0` });
    expect(capped.text).toBe("stopped after 0 redirects (tools.web_fetch.max_redirects)");
  });

  it("a redirect to file:// or to a private address is refused, naming the target", async () => {
    const s = await site((req, res) => {
      res.writeHead(302, { location: req.url === "/file" ? "file:///etc/passwd" : "http://169.254.169.254/latest/meta-data/" }).end();
    });
    const h = gateway({ allow_hosts: [s.host] });
    expect((await webFetch(h, { url: `${s.url}/file` })).text).toBe("redirect to file:///etc/passwd refused: only http/https URLs are allowed");
    expect((await webFetch(h, { url: `${s.url}/meta` })).text).toBe(
      "redirect to http://169.254.169.254/latest/meta-data/ refused: fetching private or local network hosts is not allowed: 169.254.169.254 is a link-local address (169.254.0.0/16, where cloud metadata services answer) (tools.web.allow_hosts lists hosts that may be reached)",
    );
  });
});

describe("web_fetch is bounded", () => {
  it("a server that trickles a byte a second is cut by the time limit, with a result that says which", async () => {
    let sent = 0;
    const s = await site((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      const timer = setInterval(() => {
        sent++;
        res.write("x");
      }, 1000);
      res.on("close", () => clearInterval(timer));
    });
    const result = await webFetch(gateway({ allow_hosts: [s.host] }, { timeout_seconds: 2 }), { url: s.url });
    expect(result).toMatchObject({ error: true, text: "request failed: no complete answer within 2 s (tools.web_fetch.timeout_seconds)" });
    expect(sent).toBeGreaterThan(0);
  });

  it("the turn's end stops a fetch in flight: the turn's deadline answers, and the connection is dropped", async () => {
    let closed = false;
    const s = await site((_req, res) => {
      res.on("close", () => {
        closed = true;
      });
    });
    const h = harness({ config: { agents: { defaults: { turn_timeout_ms: 500 } }, tools: { web: { allow_hosts: [s.host] } } } });
    const { status } = await h.chat({ message: `CALL web_fetch ${JSON.stringify({ url: s.url })}`, session: "deadline" });
    expect(status).toBe(504);
    await waitFor("the server to see the fetch's connection dropped", () => closed);
  });

  it("a server that never answers is cut by the time limit too", async () => {
    const s = await site(() => {});
    const result = await webFetch(gateway({ allow_hosts: [s.host] }, { timeout_seconds: 1 }), { url: s.url });
    expect(result.text).toBe("request failed: no complete answer within 1 s (tools.web_fetch.timeout_seconds)");
  });

  it("a 1 GB body is cut at fetch_limit_bytes: its start is read, the connection dropped, the rest never sent", async () => {
    const chunk = Buffer.alloc(64 * 1024, "a");
    const total = 1024 ** 3;
    let sent = 0;
    let closed = false;
    const s = await site((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(total) });
      const pump = () => {
        while (!closed && sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!closed) res.end();
      };
      res.on("close", () => {
        closed = true;
      });
      pump();
    });
    const result = await webFetch(gateway({ allow_hosts: [s.host], fetch_limit_bytes: 4096 }), { url: s.url, maxChars: 1_000_000 });
    expect(result.result.truncated).toBe(true);
    expect(result.result.text).toBe(`${"a".repeat(4096)}\n[Content cut: the page is larger than 4 KiB (tools.web.fetch_limit_bytes); only its start was read]`);
    await waitFor("the server to see its connection dropped", () => closed);
    // What the socket buffers held when the connection was dropped, not the gigabyte.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
});
