/**
 * The gateway's own Headers, Request and Response (src/gateway/http/), which hono runs on in place of Node's (whose
 * loading costs ~10 MiB and ~17 ms): what a route, a middleware or a test reads of them is the Fetch standard's.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { Headers } from "../../src/gateway/http/headers.js";
import { Request } from "../../src/gateway/http/request.js";
import { Response } from "../../src/gateway/http/response.js";

describe("Headers", () => {
  it("finds names whatever their case, joins a name's values with a comma, and lists names lower-cased and sorted", () => {
    const headers = new Headers({ "X-B": "2", "x-a": "1" });
    headers.append("X-A", "  one more\t");
    expect(headers.get("X-A")).toBe("1, one more");
    expect(headers.has("x-b")).toBe(true);
    expect([...headers]).toEqual([
      ["x-a", "1, one more"],
      ["x-b", "2"],
    ]);
    headers.set("x-a", "only");
    headers.delete("X-B");
    expect([...headers.keys()]).toEqual(["x-a"]);
    expect([...headers.values()]).toEqual(["only"]);
    expect(headers.get("absent")).toBeNull();
  });

  it("joins two Cookie headers as one Cookie header (with a semicolon), as Node's Headers do", () => {
    const headers = new Headers([
      ["cookie", "a=1"],
      ["Cookie", "b=2"],
    ]);
    expect(headers.get("cookie")).toBe("a=1; b=2");
  });

  it("keeps each Set-Cookie apart: getSetCookie lists them, iteration gives each as its own pair, get joins them", () => {
    const headers = new Headers([
      ["set-cookie", "a=1"],
      ["Set-Cookie", "b=2"],
      ["content-type", "text/plain"],
    ]);
    expect(headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(headers.get("set-cookie")).toBe("a=1, b=2");
    expect([...headers]).toEqual([
      ["content-type", "text/plain"],
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect(headers.toNode()).toEqual({ headers: { "content-type": "text/plain", "set-cookie": ["a=1", "b=2"] }, contentLength: false });
  });

  it("refuses a header injection (a value with CR or LF, a name with a space) with a TypeError, and changes nothing", () => {
    const headers = new Headers({ a: "1" });
    expect(() => headers.set("a", "1\r\nx-evil: yes")).toThrow(TypeError);
    expect(() => headers.append("x\nevil", "1")).toThrow(TypeError);
    expect(() => headers.append("bad name", "1")).toThrow(TypeError);
    expect(() => new Headers({ "x-a": "a\0b" })).toThrow(TypeError);
    // What Node would refuse to write: other control characters, DEL, characters past U+00FF.
    for (const value of ["a\u007fb", "a\u0001b", "10 €"]) expect(() => headers.set("x-b", value), JSON.stringify(value)).toThrow(TypeError);
    expect(new Headers({ "x-latin": "café\tau lait" }).get("x-latin")).toBe("café\tau lait");
    expect([...headers]).toEqual([["a", "1"]]);
  });

  it("is made from Node's Headers, a Map, or Node's raw header list; Node's Headers count as instances", () => {
    const node = new globalThis.Headers({ "X-Node": "yes" });
    expect(new Headers(node).get("x-node")).toBe("yes");
    expect(new Headers(new Map([["x-map", "1"]])).get("X-Map")).toBe("1");
    expect(Headers.fromRaw(["Host", "example.com", "Accept", "a", "accept", "b"]).get("accept")).toBe("a, b");
    expect(node instanceof Headers).toBe(true);
    expect({} instanceof Headers).toBe(false);
    expect(() => new Headers([["only-a-name"]] as unknown as [string, string][])).toThrow(TypeError);
  });
});

describe("Response", () => {
  it("a string body reads back as text, JSON and bytes, with the standard's Content-Type, and only once", async () => {
    const res = new Response('{"a":1}', { status: 201, headers: { "x-id": "7" } });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get("content-type")).toBe("text/plain;charset=UTF-8");
    expect(await res.clone().json()).toEqual({ a: 1 });
    expect(new Uint8Array(await res.clone().arrayBuffer())).toEqual(new TextEncoder().encode('{"a":1}'));
    expect(await res.text()).toBe('{"a":1}');
    expect(res.bodyUsed).toBe(true);
    await expect(res.text()).rejects.toThrow(TypeError);
  });

  it("a stream body is read as it comes, and a clone of it reads the same bytes", async () => {
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode("data: 1\n\n"));
        controller.enqueue(encoder.encode("data: 2\n\n"));
        controller.close();
      },
    });
    const res = new Response(stream, { headers: { "content-type": "text/event-stream" } });
    const copy = res.clone();
    expect(await res.text()).toBe("data: 1\n\ndata: 2\n\n");
    const reader = copy.body!.getReader();
    const chunks: string[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(new TextDecoder().decode(r.value));
    expect(chunks.join("")).toBe("data: 1\n\ndata: 2\n\n");
  });

  it("refuses a status outside 200-599, a body on a 204 and a reason phrase with a line break", () => {
    expect(() => new Response(null, { status: 99 })).toThrow(RangeError);
    expect(() => new Response(null, { status: 600 })).toThrow(RangeError);
    expect(() => new Response("x", { status: 204 })).toThrow(TypeError);
    expect(() => new Response(null, { statusText: "ok\r\nx: y" })).toThrow(TypeError);
    expect(new Response(null, { status: 204 }).body).toBeNull();
  });

  it("Response.json, Response.redirect and Response.error answer as the standard's do", async () => {
    const json = Response.json({ ok: true }, { status: 202 });
    expect(json.status).toBe(202);
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(await json.json()).toEqual({ ok: true });
    const moved = Response.redirect("http://example.com/a b", 307);
    expect([moved.status, moved.headers.get("location")]).toEqual([307, "http://example.com/a%20b"]);
    expect(() => Response.redirect("http://example.com/", 200)).toThrow(RangeError);
    expect([Response.error().status, Response.error().type]).toEqual([0, "error"]);
  });

  it("a FormData body is encoded by Node's own Response, boundary and all", async () => {
    const form = new FormData();
    form.set("name", "pico");
    const res = new Response(form);
    expect(res.headers.get("content-type")).toMatch(/^multipart\/form-data; boundary=/);
    expect((await res.formData()).get("name")).toBe("pico");
  });

  it("Node's Responses count as instances (hono's checks take a Response a plugin got from fetch); a subclass's check stays its own", () => {
    expect(new globalThis.Response("x") instanceof Response).toBe(true);
    class Mine extends Response {}
    expect(new Response("x") instanceof Mine).toBe(false);
    expect(new Mine("x") instanceof Mine).toBe(true);
  });
});

describe("Request", () => {
  it("parses its URL, upper-cases the standard methods (not others) and refuses CONNECT, TRACE and TRACK", () => {
    expect(new Request("http://Example.com/a/../b?q=1").url).toBe("http://example.com/b?q=1");
    expect(new Request("http://x/", { method: "post" }).method).toBe("POST");
    expect(new Request("http://x/", { method: "patch" }).method).toBe("patch");
    for (const method of ["CONNECT", "trace", "Track"]) expect(() => new Request("http://x/", { method })).toThrow(TypeError);
    expect(() => new Request("/relative")).toThrow(TypeError);
    expect(() => new Request("http://x/", { method: "GET", body: "no" })).toThrow(TypeError);
  });

  it("a Request made from another takes its body (the first is used then), and a clone reads the body again", async () => {
    const first = new Request("http://x/", { method: "POST", body: new URLSearchParams({ a: "1" }) });
    expect(first.headers.get("content-type")).toBe("application/x-www-form-urlencoded;charset=UTF-8");
    const second = new Request(first, { method: "PUT" });
    expect(first.bodyUsed).toBe(true);
    expect([second.method, second.url, second.headers.get("content-type")]).toEqual(["PUT", "http://x/", "application/x-www-form-urlencoded;charset=UTF-8"]);
    const copy = second.clone();
    expect(await second.text()).toBe("a=1");
    expect((await copy.formData()).get("a")).toBe("1");
  });

  it("a request's own signal is never aborted unless one is given; Node's Requests count as instances", () => {
    expect(new Request("http://x/").signal.aborted).toBe(false);
    const controller = new AbortController();
    controller.abort();
    expect(new Request("http://x/", { signal: controller.signal }).signal.aborted).toBe(true);
    expect(new globalThis.Request("http://x/") instanceof Request).toBe(true);
  });
});

describe("hono on the gateway's classes", () => {
  it("hono's answers, its Headers and the Request app.request makes are the gateway's own, not Node's", async () => {
    const app = new Hono();
    let seen: unknown;
    app.get("/", (c) => {
      seen = c.req.raw;
      c.header("x-one", "1");
      return c.json({ hi: true });
    });
    const res = await app.request("/");
    expect(Object.getPrototypeOf(res)).toBe(Response.prototype);
    expect(Object.getPrototypeOf(res.headers)).toBe(Headers.prototype);
    expect(Object.getPrototypeOf(seen)).toBe(Request.prototype);
    expect(res.headers.get("x-one")).toBe("1");
    expect(await res.json()).toEqual({ hi: true });
  });
});
