/**
 * The chat page as the gateway serves it (`GET /`, `/assets/<name>`),
 * through the app's real middleware, from the build's own files.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/gateway/app.js";
import { PAGE_CSP } from "../../src/gateway/page.js";
import { loadPage } from "../../src/page.js";
import { harness, jsonOf, tempDir } from "../support/project.js";

const built = loadPage(path.resolve(import.meta.dirname, "..", "..", "dist", "web"));
if (!("page" in built)) throw new Error(`build the page first (npm run build): ${built.warning}`);
const { page } = built;

/** The gateway app with the page, as `picoclaw gateway` makes it. */
function gatewayApp(token = "") {
  const h = harness({ token });
  return createApp(h.runtime, { token, page });
}

describe("the chat page's route", () => {
  it("GET / is the page, with a strict Content-Security-Policy, nosniff, no referrer and no framing", async () => {
    const res = await gatewayApp().request("http://127.0.0.1:18790/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    for (const part of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "object-src 'none'",
      "frame-ancestors 'none'",
      "require-trusted-types-for 'script'",
      "trusted-types dompurify",
    ]) {
      expect(PAGE_CSP).toContain(part);
    }
    expect(PAGE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    // No inline script or style: everything the page runs comes from its own files.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
  });

  it("every file the page names is served, with its type; nothing is fetched from elsewhere", async () => {
    const app = gatewayApp();
    const html = await (await app.request("/")).text();
    const named = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(named.sort()).toEqual(["assets/app.css", "assets/app.js", "assets/favicon.svg"]);
    const types: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8", svg: "image/svg+xml" };
    for (const file of named) {
      const res = await app.request(`/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get("content-type"), file).toBe(types[file.split(".").pop()!]);
      expect(res.headers.get("x-content-type-options"), file).toBe("nosniff");
    }
    const script = await (await app.request("/assets/app.js")).text();
    // The only addresses in it: XML namespaces, the Markdown library's own (in its error text), and the scheme it puts before a bare www. link.
    const addresses = [...script.matchAll(/https?:\/\/[^"'`\s)]*/g)].map((m) => m[0]).filter((url) => !/^http:\/\/www\.w3\.org\//.test(url));
    expect(new Set(addresses)).toEqual(new Set(["http://", "https://github.com/markedjs/marked."]));
  });

  it("needs no token, while every /v1 route still does", async () => {
    const app = gatewayApp("s3cret-token");
    expect((await app.request("/")).status).toBe(200);
    expect((await app.request("/assets/app.js")).status).toBe(200);
    expect((await app.request("/v1/agents")).status).toBe(401);
    expect((await app.request("/v1/agents", { headers: { authorization: "Bearer s3cret-token" } })).status).toBe(200);
  });

  it("keeps the Host and Origin checks: another site's page, or a rebound DNS name, gets 403", async () => {
    const app = gatewayApp();
    const foreign = await app.request("http://127.0.0.1:18790/", { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect((await jsonOf(foreign)).error.code).toBe("forbidden_origin");
    const rebound = await app.request("/", { headers: { host: "evil.example:18790" } });
    expect(rebound.status).toBe(403);
    expect((await jsonOf(rebound)).error.code).toBe("forbidden_host");
  });

  it("answers an unknown asset, or a path that tries to leave the folder, with 404 JSON", async () => {
    const app = gatewayApp();
    for (const url of ["/assets/nope.js", "/assets/..%2Fpackage.json", "/assets/../package.json", "/index.html", "/assets/"]) {
      const res = await app.request(url);
      expect(res.status, url).toBe(404);
      expect((await jsonOf(res)).error.code, url).toBe("not_found");
    }
  });

  it("answers HEAD without a body, and a repeated GET with the same ETag with 304", async () => {
    const app = gatewayApp();
    const head = await app.request("/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const etag = (await app.request("/assets/app.css")).headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await app.request("/assets/app.css", { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  it("an app made without the page (an embedder's) answers GET / with 404, as before", async () => {
    const res = await harness().request("/");
    expect(res.status).toBe(404);
  });
});

describe("loading the page at start-up", () => {
  it("a folder without index.html is a warning that says how to build it, not a failed start", () => {
    const dir = tempDir();
    const loaded = loadPage(dir);
    expect(loaded).toEqual({ warning: expect.stringMatching(/the web page is not built .*npm run build/) });
  });

  it("serves only the files of known types, by name", () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "index.html"), "<!doctype html>");
    writeFileSync(path.join(dir, "app.js"), "export {};");
    writeFileSync(path.join(dir, "notes.txt"), "not served");
    const loaded = loadPage(dir);
    if (!("page" in loaded)) throw new Error(loaded.warning);
    expect([...loaded.page.assets.keys()]).toEqual(["app.js"]);
    expect(loaded.page.index.type).toBe("text/html; charset=utf-8");
  });
});
