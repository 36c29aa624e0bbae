/**
 * The node listener (src/gateway/http/node-listener.ts): Node's server to hono's app on the gateway's own fetch
 * classes, in place of @hono/node-server. Proven over real sockets on 127.0.0.1, with requests written byte by byte
 * where a client library would clean them up (a bad Host, a path with dot segments, the absolute form).
 */
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { limitBodies } from "../../src/gateway/body-limit.js";
import { answerClientErrors } from "../../src/gateway/http/client-errors.js";
import { continueOnRead } from "../../src/gateway/http/expect-continue.js";
import { nodeListener } from "../../src/gateway/http/node-listener.js";
import { Response } from "../../src/gateway/http/response.js";
import { waitFor, within } from "../support/wait.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** The listener on `app`, on a port of its own; `prepare` gets Node's server before it listens. */
async function serve(app: Hono, prepare?: (server: Server) => void): Promise<number> {
  const server = createServer(nodeListener((request, env) => app.fetch(request as unknown as globalThis.Request, env), { hostname: "127.0.0.1" }));
  prepare?.(server);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes `raw` on a new connection and resolves with all the server sends until it closes the connection or `until` matches. */
function exchange(port: number, raw: string | string[], until?: RegExp): Promise<string> {
  return within(
    "the server's answer",
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let got = "";
      socket.on("data", (chunk) => {
        got += chunk.toString();
        if (until?.test(got)) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      for (const part of Array.isArray(raw) ? raw : [raw]) socket.write(part);
    }),
  );
}

function echoApp(): Hono {
  const app = new Hono();
  app.all("*", (c) => c.json({ url: c.req.url, method: c.req.method }));
  return app;
}

describe("the node listener", () => {
  it("refuses a Host that is no host (a@b, a/b) with a 400 JSON error, before the app sees the request", async () => {
    const app = new Hono();
    let reached = 0;
    app.all("*", (c) => {
      reached++;
      return c.text("app");
    });
    const port = await serve(app);
    for (const host of ["a@b", "evil.com/x", "a b"]) {
      const answer = await exchange(port, `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer, host).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('{"error":{"code":"invalid_request","message":"');
    }
    const noSlash = await exchange(port, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(noSlash).toMatch(/^HTTP\/1\.1 400 /);
    expect(reached).toBe(0);
  });

  it("refuses a Host whose URL does not parse (a port past 65535, a dotted number past 255) with a 400, not a 500 later", async () => {
    const port = await serve(echoApp());
    for (const host of ["localhost:70000", "256.256.256.256", "a.1"]) {
      const answer = await exchange(port, `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer, host).toMatch(/^HTTP\/1\.1 400 /);
    }
    for (const host of ["localhost:80", "localhost:65535", "[::1]:8080", "Example.COM"]) {
      const answer = await exchange(port, `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer, host).toMatch(/^HTTP\/1\.1 200 /);
    }
  });

  it("an answer Node cannot write (its body stream locked) is a 500 JSON error, told to onError, and the server goes on", async () => {
    const app = new Hono();
    app.get("/locked", () => {
      const body = new ReadableStream<Uint8Array>();
      body.getReader();
      // The gateway's own Response takes such a stream (Node's refuses it at once); the listener finds it locked.
      return new Response(body) as unknown as globalThis.Response;
    });
    app.get("/ok", (c) => c.text("ok"));
    const errors: unknown[] = [];
    const server = createServer(
      nodeListener((request, env) => app.fetch(request as unknown as globalThis.Request, env), { hostname: "127.0.0.1", onError: (e) => errors.push(e) }),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const answer = await exchange(port, "GET /locked HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 500 /);
    expect(answer).toContain('"code":"internal"');
    expect(String(errors[0])).toMatch(/locked/);
    expect(await exchange(port, "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("a text answer sent chunked by its route's own header gets no Content-Length beside it", async () => {
    const app = new Hono();
    app.get("/te", (c) => c.text("chunked", 200, { "transfer-encoding": "chunked" }));
    const port = await serve(app);
    const answer = await exchange(port, "GET /te HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).not.toMatch(/\r\ncontent-length:/i);
    expect(answer).toContain("chunked");
  });

  it("refuses a body in a transfer coding other than chunked (gzip, chunked) with a 501, before the app reads it still encoded", async () => {
    const app = new Hono();
    let reached = 0;
    app.post("*", async (c) => {
      reached++;
      return c.text(await c.req.text());
    });
    const port = await serve(app);
    const answer = await exchange(port, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 501 /);
    expect(answer).toContain('"code":"not_implemented"');
    expect(reached).toBe(0);
    const chunked = await exchange(port, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n2\r\nhi\r\n0\r\n\r\n");
    expect(chunked).toMatch(/^HTTP\/1\.1 200 /);
    expect(chunked.endsWith("\r\n\r\nhi")).toBe(true);
  });

  it("what Node's parser refuses (Content-Length with Transfer-Encoding, a folded header, too many headers) is a JSON error, and the connection closed", async () => {
    const port = await serve(echoApp(), (server) => {
      server.maxHeadersCount = 50;
      answerClientErrors(server);
    });
    const smuggled = await exchange(port, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    expect(smuggled).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(smuggled.split("\r\n\r\n")[1]!)).toEqual({
      error: { code: "invalid_request", message: expect.stringMatching(/^the request is not valid HTTP\/1\.1/) },
    });
    const folded = await exchange(port, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n  b\r\n\r\n");
    expect(folded).toMatch(/^HTTP\/1\.1 400 /);
    const flood = await exchange(port, `GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(flood).toMatch(/^HTTP\/1\.1 431 /);
    expect(flood).toContain('"code":"request_header_fields_too_large"');
  });

  it("resolves dot segments before routing (/a/../health is /health) and takes the absolute form of a request line", async () => {
    const port = await serve(echoApp());
    const dots = await exchange(port, "GET /v1/../health?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(dots).toContain('"url":"http://127.0.0.1/health?x=1"');
    const absolute = await exchange(port, "GET http://example.com/abs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(absolute).toContain('"url":"http://example.com/abs"');
    const backslash = await exchange(port, "GET /a\\..\\health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(backslash).toMatch(/^HTTP\/1\.1 400 /);
  });

  it("writes a text answer with its Content-Length, each Set-Cookie as a header of its own, and HEAD without a body", async () => {
    const app = new Hono();
    app.get("/c", (c) => {
      c.header("set-cookie", "a=1", { append: true });
      c.header("set-cookie", "b=2", { append: true });
      return c.text("héllo");
    });
    const port = await serve(app);
    const answer = await exchange(port, "GET /c HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(answer).toMatch(/\r\ncontent-length: 6\r\n/i);
    expect(answer.match(/\r\nset-cookie: /gi)).toHaveLength(2);
    expect(answer.endsWith("\r\n\r\nhéllo")).toBe(true);
    const head = await exchange(port, "HEAD /c HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.endsWith("\r\n\r\n")).toBe(true);
  });

  it("a client that goes away mid-stream aborts its request's signal and cancels the answer's stream", async () => {
    const app = new Hono();
    let aborted = false;
    let cancelled = false;
    app.get("/stream", (c) => {
      c.req.raw.signal.addEventListener("abort", () => {
        aborted = true;
      });
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("data: first\n\n"));
        },
        cancel() {
          cancelled = true;
        },
      });
      return c.body(body, 200, { "content-type": "text/event-stream" });
    });
    const port = await serve(app);
    const answer = await exchange(port, "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", /data: first/);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\ntransfer-encoding: chunked\r\n/i);
    await waitFor("the request's signal to abort and the stream to be cancelled", () => aborted && cancelled);
  });

  it("a body the app never read is dropped, and the connection serves the next request", async () => {
    const app = new Hono();
    app.post("/ignore", (c) => c.text("ignored", 401));
    app.get("/next", (c) => c.text("next"));
    const port = await serve(app);
    const body = "x".repeat(50_000);
    const answer = await exchange(
      port,
      [`POST /ignore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n`, body, "GET /next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"],
      /\r\n\r\nnext$/,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/\r\n\r\nnext$/);
  });

  it("a client that trickles a body nobody reads is cut once 500 ms of dropping it have passed, not left to the request timeout", async () => {
    const app = new Hono();
    app.post("/ignore", (c) => c.text("ignored", 401));
    const port = await serve(app);
    const socket = connect(port, "127.0.0.1");
    let got = "";
    let answeredAt = 0;
    socket.on("data", (chunk) => {
      got += chunk.toString();
      if (answeredAt === 0 && got.includes("ignored")) answeredAt = performance.now();
    });
    const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(performance.now())));
    socket.on("error", () => {});
    socket.write("POST /ignore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n");
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write("x".repeat(10));
    }, 50);
    try {
      const at = await within("the connection to be cut", closed);
      expect(got).toMatch(/^HTTP\/1\.1 401 /);
      // Cut by the drain's 500 ms, long before the body could end (100,000 bytes at 200 a second) or a request timeout.
      expect(at - answeredAt).toBeLessThan(5_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it("an app that throws (past hono's own error handler) is a 500 JSON error, and the server goes on", async () => {
    const port = await serve(echoApp());
    const throwing = await serve(new Hono());
    const failing = createServer(
      nodeListener(
        () => {
          throw new Error("boom");
        },
        { hostname: "127.0.0.1" },
      ),
    );
    servers.push(failing);
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    const failingPort = (failing.address() as AddressInfo).port;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const answer = await exchange(failingPort, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      expect(answer).toMatch(/^HTTP\/1\.1 500 /);
      expect(answer).toContain('"code":"internal"');
      expect(answer).not.toContain("boom");
      await waitFor("the warning naming the failure", () => warnings.some((w) => w.message === "boom"));
    } finally {
      process.off("warning", onWarning);
    }
    expect(await exchange(throwing, "GET /none HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 404 /);
    expect(await exchange(port, "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe("Expect: 100-continue", () => {
  /** The listener with the gateway's body limit (10 bytes) and 100 Continue said when a route reads the body. */
  async function serveLimited(): Promise<number> {
    const app = new Hono();
    app.use("*", limitBodies(10));
    app.post("/echo", async (c) => c.json({ body: await c.req.text() }));
    app.post("/closed", (c) => c.json({ error: { code: "unauthorized", message: "a token is needed" } }, 401));
    return serve(app, continueOnRead);
  }

  it("a body over the limit is refused (413) on its headers, without 100 Continue, and the connection closed", async () => {
    const port = await serveLimited();
    const got = await exchange(
      port,
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n",
    );
    expect(got).not.toContain("100 Continue");
    expect(got).toMatch(/^HTTP\/1\.1 413 /);
    expect(got).toContain('"payload_too_large"');
    expect(got).toMatch(/\r\nConnection: close\r\n/i);
  });

  it("a route that answers without reading the body (401) does so without 100 Continue", async () => {
    const port = await serveLimited();
    const got = await exchange(
      port,
      "POST /closed HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
    );
    expect(got).not.toContain("100 Continue");
    expect(got).toMatch(/^HTTP\/1\.1 401 /);
  });

  it("a body the route reads gets 100 Continue first, and then its answer once sent", async () => {
    const port = await serveLimited();
    const socket = connect(port, "127.0.0.1");
    let got = "";
    socket.on("data", (chunk) => (got += chunk.toString()));
    socket.write("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    await waitFor("100 Continue", () => got.includes("HTTP/1.1 100 Continue\r\n\r\n"), { instead: () => got });
    expect(got).toBe("HTTP/1.1 100 Continue\r\n\r\n");
    socket.write("hello");
    await waitFor("the answer", () => got.includes('{"body":"hello"}'), { instead: () => got });
    expect(got).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
    socket.destroy();
  });
});
