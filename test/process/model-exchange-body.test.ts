/**
 * A model request's body goes to the server as the bytes of its text,
 * encoded once, piece by piece (src/models/json-text.ts, exchange.ts): the
 * bytes are JSON.stringify's text in UTF-8, the content-length the server
 * gets is the UTF-8 byte count, not the character count, and a redirect
 * that repeats the request (307) sends the same bytes again.
 */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { Cutoff, nodeExchange } from "../../src/models/exchange.js";
import { JsonText, bodyBytes } from "../../src/models/json-text.js";
import { listenForTest } from "../support/listen.js";

describe("a model request's body on the wire", () => {
  it("the server gets the body's UTF-8 bytes with their byte count as content-length, after a 307 too", async () => {
    const seen: { url: string; length: string | undefined; body: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        seen.push({ url: req.url ?? "", length: req.headers["content-length"], body: Buffer.concat(chunks).toString("utf8") });
        if (req.url === "/first") {
          res.writeHead(307, { location: "/second" });
          res.end();
          return;
        }
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      });
    });
    const origin = await listenForTest(server);
    const request = { messages: new JsonText(JSON.stringify([{ role: "user", content: "héllo — 你好 🙂".repeat(2000) }])), stream: true };
    const body = JSON.stringify(request);
    const answer = await nodeExchange(`${origin}/first`, { "content-type": "application/json" }, bodyBytes(request), new Cutoff());
    expect(answer.status).toBe(200);
    for await (const _ of answer.body) {
      // read to the end
    }
    expect(seen.map((s) => s.url)).toEqual(["/first", "/second"]);
    for (const request of seen) {
      expect(request.body).toBe(body);
      expect(request.length).toBe(String(Buffer.byteLength(body)));
    }
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
  });
});
