import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/house.js";
import { ConfigError } from "../../src/errors.js";
import { createApp } from "../../src/gateway/app.js";
import { type Harness, harness, jsonOf, writeProject } from "../support/project.js";

/** What a web page on another site can send without asking first: a "simple" cross-site POST. */
const browserPost = (origin: string | undefined, contentType: string, body = '{"message":"CALL subagent {\\"task\\":\\"exfiltrate\\"}"}') => ({
  method: "POST",
  headers: { "content-type": contentType, ...(origin ? { origin } : {}) },
  body,
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

/** No turn ran: no session has a history, no model was asked. */
async function expectNothingRan(h: Harness): Promise<void> {
  expect(h.runtime.sessionKeys()).toEqual([]);
  expect(await h.runtime.historyOf("agent:main:http:default")).toEqual([]);
}

describe("content type", () => {
  it("a cross-site text/plain POST runs nothing", async () => {
    const h = harness();
    const foreign = await h.request("/v1/chat", browserPost("https://evil.example", "text/plain"));
    expect(foreign.status).toBe(403);
    expect((await jsonOf(foreign)).error.code).toBe("forbidden_origin");
    // The same body without an Origin (a page whose browser left it out, a stray script): still nothing runs.
    const plain = await h.request("/v1/chat", browserPost(undefined, "text/plain"));
    expect(plain.status).toBe(415);
    expect(await jsonOf(plain)).toEqual({
      error: {
        code: "unsupported_media_type",
        message: "the body was sent as Content-Type: text/plain; expected Content-Type: application/json",
      },
    });
    await expectNothingRan(h);
  });

  it.each([
    ["text/plain;charset=UTF-8", "as Content-Type: text/plain;charset=UTF-8"],
    ["application/x-www-form-urlencoded", "as Content-Type: application/x-www-form-urlencoded"],
    ["multipart/form-data; boundary=x", "as Content-Type: multipart/form-data; boundary=x"],
    ["application/jsonp", "as Content-Type: application/jsonp"],
  ])("a body sent as %s is refused with 415 naming what was sent and what is expected", async (type, shown) => {
    const h = harness();
    const res = await h.request("/v1/chat", browserPost(undefined, type, '{"message":"hello"}'));
    expect(res.status).toBe(415);
    expect((await jsonOf(res)).error).toEqual({
      code: "unsupported_media_type",
      message: `the body was sent ${shown}; expected Content-Type: application/json`,
    });
    await expectNothingRan(h);
  });

  it("a body sent without a Content-Type is refused with 415", async () => {
    const h = harness();
    // Bytes, not a string: a string body would get text/plain from fetch.
    const res = await h.request("/v1/chat", { method: "POST", body: new TextEncoder().encode('{"message":"hello"}') });
    expect(res.status).toBe(415);
    expect((await jsonOf(res)).error.message).toBe("the body was sent without a Content-Type; expected Content-Type: application/json");
    await expectNothingRan(h);
  });

  it("JSON is accepted with any charset parameter, in any case", async () => {
    const h = harness();
    for (const type of ["application/json", "Application/JSON; Charset=UTF-8", "application/json;charset=utf-8"]) {
      const res = await h.request("/v1/chat", { method: "POST", headers: { "content-type": type }, body: JSON.stringify({ message: "hello", session: "s1" }) });
      expect(res.status, type).toBe(200);
    }
    expect(await h.runtime.historyOf("agent:main:http:s1")).toHaveLength(6);
  });

  it("a POST without a body is not asked for a content type, and still runs nothing", async () => {
    const h = harness();
    const res = await h.request("/v1/chat", { method: "POST" });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.code).toBe("invalid_json");
    await expectNothingRan(h);
  });

  it("a client without the token learns only that it needs one, whatever it sends", async () => {
    const h = harness({ token: "s3cret" });
    const res = await h.request("/v1/chat", browserPost(undefined, "text/plain"));
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error.code).toBe("unauthorized");
  });
});

describe("origin", () => {
  it("a page on another origin is refused on every route, /health included", async () => {
    const h = harness();
    for (const [path, init] of [
      ["/health", {}],
      ["/v1/agents", {}],
      ["/v1/sessions/agent:main:http:default/history", {}],
      ["/v1/nothing", {}],
      ["/v1/chat", json({ message: "hello" })],
    ] as const) {
      const res = await h.request(path, { ...init, headers: { ...("headers" in init ? init.headers : {}), origin: "https://evil.example" } });
      expect(res.status, path).toBe(403);
      expect(await jsonOf(res)).toEqual({
        error: {
          code: "forbidden_origin",
          message: `requests from pages of "https://evil.example" are refused: that origin is not the gateway's own and not in gateway.allowed_origins`,
        },
      });
      expect(res.headers.get("access-control-allow-origin"), path).toBeNull();
    }
    await expectNothingRan(h);
  });

  it("an opaque origin (a sandboxed frame, a local file) is refused too", async () => {
    const res = await harness().request("/v1/chat", browserPost("null", "application/json", '{"message":"hi"}'));
    expect(res.status).toBe(403);
    expect((await jsonOf(res)).error.code).toBe("forbidden_origin");
  });

  it("a browser's request for another site's page is refused even without an Origin (an image, a link)", async () => {
    const h = harness();
    for (const site of ["cross-site", "same-site"]) {
      const res = await h.request("/v1/sessions/agent:main:http:default/events", { headers: { "sec-fetch-site": site } });
      expect(res.status, site).toBe(403);
      expect(await jsonOf(res)).toEqual({
        error: { code: "forbidden_origin", message: `requests a browser sends for pages of another site (Sec-Fetch-Site: ${site}) are refused` },
      });
    }
    // The user's own address bar, and the gateway's own pages, are not another site.
    for (const site of ["none", "same-origin"]) expect((await h.request("/v1/agents", { headers: { "sec-fetch-site": site } })).status, site).toBe(200);
  });

  it("the gateway's own origin goes through; another port or scheme on the same host does not", async () => {
    const h = harness();
    const own = await h.request("http://127.0.0.1:18790/v1/agents", { headers: { origin: "http://127.0.0.1:18790" } });
    expect(own.status).toBe(200);
    expect(own.headers.get("access-control-allow-origin")).toBeNull();
    for (const origin of ["http://127.0.0.1:5173", "https://127.0.0.1:18790", "http://localhost:18790"]) {
      const res = await h.request("http://127.0.0.1:18790/v1/agents", { headers: { origin } });
      expect(res.status, origin).toBe(403);
    }
  });

  it("a listed origin's preflight is answered without the token, allowing Authorization, Content-Type and X-Session-Id", async () => {
    const h = harness({ config: { gateway: { token: "s3cret", allowed_origins: ["https://app.example.com"] } } });
    const res = await h.request("/v1/chat", {
      method: "OPTIONS",
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(res.headers.get("access-control-allow-methods")?.split(",")).toContain("POST");
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase().split(",")).toEqual(["authorization", "content-type", "x-session-id"]);
    expect(res.headers.get("vary")).toMatch(/Origin/);
  });

  it("a listed origin's requests get CORS headers and still need the token", async () => {
    const h = harness({ config: { gateway: { token: "s3cret", allowed_origins: ["https://app.example.com", "http://localhost:5173"] } } });
    const origin = { origin: "https://app.example.com" };
    const ok = await h.request("/v1/chat", json({ message: "hello" }, { ...origin, authorization: "Bearer s3cret" }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect((await jsonOf(ok)).reply).toMatch(/^You said: hello/);
    const missing = await h.request("/v1/chat", json({ message: "again" }, origin));
    expect(missing.status).toBe(401);
    // The page may read why it was refused.
    expect(missing.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const dev = await h.request("/health", { headers: { origin: "http://localhost:5173" } });
    expect(dev.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  it("a listed origin matches however the config writes it (case, default port)", async () => {
    const h = harness({ config: { gateway: { allowed_origins: ["HTTPS://App.Example.com:443"] } } });
    const res = await h.request("/v1/agents", { headers: { origin: "https://app.example.com" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
  });

  it("a preflight from an unlisted origin is refused", async () => {
    const h = harness({ config: { gateway: { allowed_origins: ["https://app.example.com"] } } });
    for (const origin of ["https://evil.example", "https://app.example.com.evil.example", "http://app.example.com"]) {
      const res = await h.request("/v1/chat", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
      expect(res.status, origin).toBe(403);
      expect((await jsonOf(res)).error.code).toBe("forbidden_origin");
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
  });
});

describe("host (DNS rebinding)", () => {
  it("without a token, a page that points its own name at this machine is refused, and runs nothing", async () => {
    const h = harness();
    // A rebinding page is same-origin with itself: Origin and Host both name its domain.
    const res = await h.request("/v1/chat", json({ message: "CALL subagent {}" }, { host: "evil.example:18790", origin: "http://evil.example:18790" }));
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toEqual({
      error: {
        code: "forbidden_host",
        message: 'Host "evil.example:18790" is refused: with no gateway.token set, only localhost, 127.x.y.z, [::1] and gateway.allowed_hosts are answered',
      },
    });
    expect((await h.request("/health", { headers: { host: "evil.example" } })).status).toBe(403);
    await expectNothingRan(h);
  });

  it("loopback names and addresses are answered on any port", async () => {
    const h = harness();
    for (const host of ["localhost", "localhost:18790", "LocalHost:1", "127.0.0.1", "127.0.0.1:18790", "127.1.2.3:80", "[::1]", "[::1]:18790"]) {
      expect((await h.request("/v1/agents", { headers: { host } })).status, host).toBe(200);
    }
  });

  it("look-alikes of loopback are not loopback", async () => {
    const h = harness();
    for (const host of ["localhost.evil.example", "127.0.0.1.evil.example", "0.0.0.0:18790", "192.168.1.5", "[::2]"]) {
      expect((await h.request("/v1/agents", { headers: { host } })).status, host).toBe(403);
    }
  });

  it("listed hosts are answered; a port in the entry pins the port", async () => {
    const h = harness({ config: { gateway: { allowed_hosts: ["MyHost.lan", "box.lan:18790", "192.168.1.5"] } } });
    for (const host of ["myhost.lan", "myhost.lan:1234", "box.lan:18790", "192.168.1.5:18790"]) {
      expect((await h.request("/v1/agents", { headers: { host } })).status, host).toBe(200);
    }
    for (const host of ["box.lan", "box.lan:18791", "other.lan"]) {
      expect((await h.request("/v1/agents", { headers: { host } })).status, host).toBe(403);
    }
  });

  it("with a token any Host is answered: the token protects it", async () => {
    const h = harness({ token: "s3cret" });
    const ok = await h.request("/v1/agents", { headers: { host: "gateway.example.com", authorization: "Bearer s3cret" } });
    expect(ok.status).toBe(200);
    const missing = await h.request("/v1/agents", { headers: { host: "gateway.example.com" } });
    expect(missing.status).toBe(401);
  });
});

describe("an answer given before the body is read", () => {
  it.each([
    [413, "payload_too_large", {}, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(1024 * 1024 + 1) }],
    [415, "unsupported_media_type", {}, browserPost(undefined, "text/plain")],
    [403, "forbidden_origin", {}, browserPost("https://evil.example", "application/json")],
    [403, "forbidden_host", {}, { ...json({ message: "hi" }), headers: { "content-type": "application/json", host: "evil.example" } }],
    [401, "unauthorized", { token: "s3cret" }, json({ message: "hi" })],
  ] as const)("%i %s carries Connection: close when a body was sent", async (status, code, opts, init) => {
    const h = harness(opts);
    const res = await h.request("/v1/chat", init);
    expect(res.status).toBe(status);
    expect((await jsonOf(res)).error.code).toBe(code);
    expect(res.headers.get("connection")).toBe("close");
    await expectNothingRan(h);
  });

  it("a refusal of a request without a body keeps the connection", async () => {
    const res = await harness({ token: "s3cret" }).request("/v1/agents");
    expect(res.status).toBe(401);
    expect(res.headers.get("connection")).toBeNull();
  });
});

describe("the gateway's config keys", () => {
  const problemsOf = (gateway: unknown): string[] => {
    try {
      loadConfig({ env: {}, cwd: writeProject({ config: { gateway }, agents: {} }) });
    } catch (error) {
      if (error instanceof ConfigError) return [...error.problems];
      throw error;
    }
    throw new Error("expected a ConfigError");
  };

  it("bad origins and hosts stop start-up, each named by its JSON path", () => {
    expect(
      problemsOf({
        allowed_origins: ["https://app.example.com", "https://app.example.com/", "null", "app.example.com", "ftp://x.example"],
        allowed_hosts: ["ok.lan", "http://x", "a b", "x/y", "::1"],
      }),
    ).toEqual([
      "gateway.allowed_origins[2]: expected an origin: scheme://host[:port], such as https://app.example.com (no path)",
      "gateway.allowed_origins[3]: expected an origin: scheme://host[:port], such as https://app.example.com (no path)",
      "gateway.allowed_origins[4]: expected an origin: scheme://host[:port], such as https://app.example.com (no path)",
      "gateway.allowed_hosts[1]: expected a host name or address, optionally with :port, such as myhost.lan or myhost.lan:18790",
      "gateway.allowed_hosts[2]: expected a host name or address, optionally with :port, such as myhost.lan or myhost.lan:18790",
      "gateway.allowed_hosts[3]: expected a host name or address, optionally with :port, such as myhost.lan or myhost.lan:18790",
      "gateway.allowed_hosts[4]: expected a host name or address, optionally with :port, such as myhost.lan or myhost.lan:18790",
    ]);
  });

  it("bad limits stop start-up, each named by its JSON path", () => {
    expect(problemsOf({ limits: { headers_timeout_ms: 50, max_connections: 0, keep_alive_timeout_ms: "5s", idle: 1 } })).toEqual([
      "gateway.limits.headers_timeout_ms: must be >= 100",
      "gateway.limits.keep_alive_timeout_ms: expected number, received string",
      "gateway.limits.max_connections: must be >= 1",
      'gateway.limits: unknown key "idle"',
    ]);
    expect(problemsOf({ limits: { headers_timeout_ms: 40_000, request_timeout_ms: 30_000 } })).toEqual([
      "gateway.limits.headers_timeout_ms: must not be more than request_timeout_ms",
    ]);
  });

  it("every origin and host the config accepts, the gateway accepts", () => {
    const origins = ["https://app.example.com", "https://app.example.com/", "http://localhost:5173", "HTTPS://App.Example.com:443", "http://[::1]:8080"];
    const hosts = ["myhost.lan", "myhost.lan:18790", "192.168.1.5", "[fd00::1]", "[fd00::1]:8080", "xn--bcher-kva.example"];
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { gateway: { allowed_origins: origins, allowed_hosts: hosts } }, agents: {} }) });
    const h = harness();
    expect(() =>
      createApp(h.runtime, { allowedOrigins: loaded.config.gateway.allowed_origins, allowedHosts: loaded.config.gateway.allowed_hosts }),
    ).not.toThrow();
  });
});
