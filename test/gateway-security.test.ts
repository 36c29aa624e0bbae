import { describe, expect, it } from "vitest";
import { type Harness, harness, jsonOf } from "./support/project.js";

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
function expectNothingRan(h: Harness): void {
  expect(h.runtime.sessionKeys()).toEqual([]);
  expect(h.runtime.historyOf("agent:main:http:default")).toEqual([]);
}

describe("content type", () => {
  it("a cross-site text/plain POST runs nothing", async () => {
    const h = harness();
    const plain = await h.request("/v1/chat", browserPost("https://evil.example", "text/plain"));
    expect(plain.status).toBe(415);
    expect(await jsonOf(plain)).toEqual({
      error: {
        code: "unsupported_media_type",
        message: "the body was sent as Content-Type: text/plain; expected Content-Type: application/json",
      },
    });
    expectNothingRan(h);
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
    expectNothingRan(h);
  });

  it("a body sent without a Content-Type is refused with 415", async () => {
    const h = harness();
    // Bytes, not a string: a string body would get text/plain from fetch.
    const res = await h.request("/v1/chat", { method: "POST", body: new TextEncoder().encode('{"message":"hello"}') });
    expect(res.status).toBe(415);
    expect((await jsonOf(res)).error.message).toBe("the body was sent without a Content-Type; expected Content-Type: application/json");
    expectNothingRan(h);
  });

  it("JSON is accepted with any charset parameter, in any case", async () => {
    const h = harness();
    for (const type of ["application/json", "Application/JSON; Charset=UTF-8", "application/json;charset=utf-8"]) {
      const res = await h.request("/v1/chat", { method: "POST", headers: { "content-type": type }, body: JSON.stringify({ message: "hello", session: "s1" }) });
      expect(res.status, type).toBe(200);
    }
    expect(h.runtime.historyOf("agent:main:http:s1")).toHaveLength(6);
  });

  it("a POST without a body is not asked for a content type, and still runs nothing", async () => {
    const h = harness();
    const res = await h.request("/v1/chat", { method: "POST" });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.code).toBe("invalid_json");
    expectNothingRan(h);
  });

  it("a client without the token learns only that it needs one, whatever it sends", async () => {
    const h = harness({ token: "s3cret" });
    const res = await h.request("/v1/chat", browserPost(undefined, "text/plain"));
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error.code).toBe("unauthorized");
  });
});

describe("an answer given before the body is read", () => {
  it.each([
    [413, "payload_too_large", {}, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(1024 * 1024 + 1) }],
    [415, "unsupported_media_type", {}, browserPost(undefined, "text/plain")],
    [401, "unauthorized", { token: "s3cret" }, json({ message: "hi" })],
  ] as const)("%i %s carries Connection: close when a body was sent", async (status, code, opts, init) => {
    const h = harness(opts);
    const res = await h.request("/v1/chat", init);
    expect(res.status).toBe(status);
    expect((await jsonOf(res)).error.code).toBe(code);
    expect(res.headers.get("connection")).toBe("close");
    expectNothingRan(h);
  });

  it("a refusal of a request without a body keeps the connection", async () => {
    const res = await harness({ token: "s3cret" }).request("/v1/agents");
    expect(res.status).toBe(401);
    expect(res.headers.get("connection")).toBeNull();
  });
});
