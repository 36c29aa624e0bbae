/**
 * web_fetch's guard at connect time, with the name resolution injected
 * through the feature's construction (createWebFeature({resolve})): a
 * runtime made with that feature runs the tool as a model calls it, against
 * real servers on 127.0.0.1 and 127.0.0.2. A name is resolved once per
 * connection, every address it resolves to is checked, and the connection
 * goes to a checked address, never to the name: a name that answers an
 * allowed address first and a private one after (DNS rebinding) reaches
 * only the allowed one.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { createWebFeature } from "../../src/features/web/feature.js";
import type { Resolve } from "../../src/features/web/guard.js";
import { builtinConfigSchema } from "../../src/house.js";
import { BuiltinModel } from "../../src/models/builtin.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { single } from "../support/controlled-model.js";
import { recordingLogger, tempDir } from "../support/project.js";

async function listen(server: Server | ReturnType<typeof createTlsServer>, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

/** A server answering its own name, counting what reached it. */
function named(name: string) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "text/plain" }).end(`this is ${name}`);
  });
  return { server, hits };
}

/** A resolver that answers each name from its script, one answer per lookup (the last one repeated), and records the lookups. */
function scripted(answers: Record<string, string[][]>) {
  const lookups: string[] = [];
  const resolve: Resolve = async (hostname) => {
    lookups.push(hostname);
    const script = answers[hostname];
    if (!script) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    const seen = lookups.filter((name) => name === hostname).length;
    const addresses = script[Math.min(seen, script.length) - 1]!;
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, lookups };
}

function runtime(resolve: Resolve, web: Record<string, unknown> = {}) {
  const agent = readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nYou fetch.").agent;
  const made = new Runtime({
    config: builtinConfigSchema().parse({ tools: { web } }),
    agents: new Map([["main", agent]]),
    models: single(new BuiltinModel("builtin")),
    features: [createWebFeature({ resolve })],
    logger: recordingLogger(),
  });
  onTestFinished(() => made.close(0));
  return async (url: string) => {
    const chatId = `c${Math.random().toString(36).slice(2, 8)}`;
    await made.handleMessage({ agentId: "main", channel: "http", chatId, text: `CALL web_fetch ${JSON.stringify({ url })}` });
    const tool = (await made.historyOf(`agent:main:http:${chatId}`)).find((m) => m.role === "tool")!;
    return { text: tool.content as string, error: (tool as { is_error?: boolean }).is_error === true };
  };
}

describe("web_fetch checks what a name resolves to, when it connects", () => {
  it("a public-looking name that resolves to 127.0.0.1 is refused, and nothing reaches the server", async () => {
    const local = named("local");
    const port = await listen(local.server, "127.0.0.1");
    const dns = scripted({ "news.example": [["127.0.0.1"]] });
    const result = await runtime(dns.resolve)(`http://news.example:${port}/`);
    expect(result).toEqual({
      error: true,
      text: "fetching private or local network hosts is not allowed: news.example resolves to 127.0.0.1, a loopback address (tools.web.allow_hosts lists hosts that may be reached)",
    });
    expect(local.hits).toEqual([]);
  });

  it("every address counts: a name answering an allowed address and a private one is refused; so is an IPv4-mapped loopback", async () => {
    const local = named("local");
    const port = await listen(local.server, "127.0.0.1");
    const dns = scripted({ "mixed.example": [["127.0.0.1", "10.0.0.7"]], "mapped.example": [["::ffff:127.0.0.1"]] });
    const fetchIt = runtime(dns.resolve, { allow_hosts: [`127.0.0.1:${port}`] });
    expect((await fetchIt(`http://mixed.example:${port}/`)).text).toMatch(
      /^fetching private or local network hosts is not allowed: mixed\.example resolves to 10\.0\.0\.7, a private network address/,
    );
    expect(local.hits).toEqual([]);
    // Without the allow list; with it, the mapped form is the listed address itself.
    expect((await runtime(dns.resolve)(`http://mapped.example:${port}/`)).text).toMatch(
      /resolves to ::ffff:127\.0\.0\.1, the IPv4-mapped IPv6 form of 127\.0\.0\.1, a loopback address/,
    );
    expect((await fetchIt(`http://mapped.example:${port}/`)).error).toBe(false);
  });

  it("DNS rebinding: a name resolved once to an allowed address, then to another, is connected to the checked address only", async () => {
    const allowed = named("the allowed server");
    const port = await listen(allowed.server, "127.0.0.1");
    const other = named("the other server");
    await listen(other.server, "127.0.0.2", port);
    // The first lookup answers the address the allow list names; every later one the other server's.
    const dns = scripted({ "rebind.example": [["127.0.0.1"], ["127.0.0.2"]] });
    const fetchIt = runtime(dns.resolve, { allow_hosts: [`127.0.0.1:${port}`] });
    const result = await fetchIt(`http://rebind.example:${port}/page`);
    expect(result.error).toBe(false);
    expect(JSON.parse(result.text)).toMatchObject({ status: 200, text: "this is the allowed server" });
    expect(dns.lookups).toEqual(["rebind.example"]);
    expect(allowed.hits).toEqual(["/page"]);
    expect(other.hits).toEqual([]);
  });

  it("a name that no longer resolves to an allowed address is refused at its next connection", async () => {
    const allowed = named("the allowed server");
    const port = await listen(allowed.server, "127.0.0.1");
    const other = named("the other server");
    await listen(other.server, "127.0.0.2", port);
    const dns = scripted({ "first.example": [["127.0.0.1"]], "second.example": [["127.0.0.2"]] });
    const fetchIt = runtime(dns.resolve, { allow_hosts: [`127.0.0.1:${port}`] });
    expect((await fetchIt(`http://first.example:${port}/`)).error).toBe(false);
    expect((await fetchIt(`http://second.example:${port}/`)).text).toMatch(
      /^fetching private or local network hosts is not allowed: second\.example resolves to 127\.0\.0\.2, a loopback address/,
    );
    expect(other.hits).toEqual([]);
  });

  it("over https the connection goes to the checked address while TLS checks the certificate against the name", async () => {
    const dir = tempDir();
    const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=secure.example",
        "-addext",
        "subjectAltName=DNS:secure.example",
      ],
      { stdio: "ignore" },
    );
    const names: string[] = [];
    const server = createTlsServer(
      {
        key: readFileSync(key),
        cert: readFileSync(cert),
        SNICallback: (name, done) => {
          names.push(name);
          done(null);
        },
      },
      (_req, res) => res.end("secret page"),
    );
    const port = await listen(server, "127.0.0.1");
    const dns = scripted({ "secure.example": [["127.0.0.1"]] });
    const result = await runtime(dns.resolve, { allow_hosts: [`127.0.0.1:${port}`] })(`https://secure.example:${port}/`);
    // The certificate is the server's own (self-signed): refused, so certificates are checked; the name TLS sent is the URL's.
    expect(result.error).toBe(true);
    expect(result.text).toMatch(/^request failed: .*self-signed certificate/);
    expect(names).toEqual(["secure.example"]);
  });

  it("a name that does not resolve is an error result naming it", async () => {
    const dns = scripted({});
    expect(await runtime(dns.resolve)("http://nowhere.example/")).toEqual({
      error: true,
      text: "request failed: nowhere.example could not be resolved (ENOTFOUND)",
    });
  });

  it("a name the allow list names may resolve to a private address (the operator's own host)", async () => {
    const nas = named("the NAS");
    const port = await listen(nas.server, "127.0.0.1");
    const dns = scripted({ "nas.lan": [["127.0.0.1"]] });
    const result = await runtime(dns.resolve, { allow_hosts: ["nas.lan"] })(`http://nas.lan:${port}/`);
    expect(JSON.parse(result.text)).toMatchObject({ text: "this is the NAS" });
  });
});
