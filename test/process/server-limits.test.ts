import { type ChildProcess, spawn } from "node:child_process";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { builtinConfigSchema } from "../../src/house.js";
import { MAX_BODY_BYTES } from "../../src/gateway/app.js";
import { DEFAULT_LIMITS, type GatewayOptions, type RunningGateway, startGateway } from "../../src/gateway/server.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { type Harness, harness, openaiConfig, writeProject } from "../support/project.js";
import { eventually, waitFor, within } from "../support/wait.js";

const configSchema = builtinConfigSchema();

const root = path.resolve(import.meta.dirname, "..", "..");

/** The gateway on a real socket (127.0.0.1, any port), closed when the test ends. */
async function serve(h: Harness, opts: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", ...opts });
  onTestFinished(() => running.close());
  return running;
}

interface RawConnection {
  socket: net.Socket;
  /** Settles when the connection closes, with everything the server sent on it. */
  closed: Promise<string>;
}

/** A bare TCP connection that sends `text` (nothing by default) and then waits; destroyed when the test ends. */
function connect(port: number, text?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    onTestFinished(() => void socket.destroy());
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    const closed = new Promise<string>((done) => socket.once("close", () => done(received)));
    socket.once("error", reject); // after connecting, a reset just closes the connection
    socket.once("connect", () => {
      if (text !== undefined) socket.write(text);
      resolve({ socket, closed });
    });
  });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Whether the request went on a connection an earlier request had used. */
  reused: boolean;
  /** Settles when the connection the request went on closes. */
  connectionClosed: Promise<void>;
}

/** One request with node's own client, on `agent` (a fresh connection when it is false). */
function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: http.Agent | false } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let connectionClosed: Promise<void> = Promise.resolve();
    const request = http.request(url, { method: init.method ?? "GET", headers: init.headers ?? {}, agent: init.agent ?? false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body, reused: request.reusedSocket, connectionClosed }));
    });
    request.on("socket", (socket) => {
      connectionClosed = new Promise((closed) => (socket.destroyed ? closed() : socket.once("close", () => closed())));
    });
    request.on("error", reject);
    request.end(init.body);
  });
}

/** An open event stream of a session (a connection busy until it is closed), and the text it has received so far. */
function openEvents(url: string, sessionKey: string): Promise<{ response: http.IncomingMessage; text: () => string; until: (part: string) => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/v1/sessions/${sessionKey}/events`, { agent: false }, (response) => {
      onTestFinished(() => void response.destroy());
      let text = "";
      let wake = () => {};
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
        wake();
      });
      const closed = new Promise<never>((_, reject) => response.once("close", () => reject(new Error(`the event stream closed after: ${text}`))));
      closed.catch(() => {});
      const arrived = async (part: string) => {
        while (!text.includes(part)) await Promise.race([new Promise<void>((woken) => (wake = woken)), closed]);
      };
      const until = (part: string) => within(`"${part}" on the event stream of ${sessionKey}`, arrived(part), { instead: () => `it got: ${text}` });
      void until(": connected").then(() => resolve({ response, text: () => text, until }));
    });
    request.on("error", reject);
  });
}

describe("the server's limits", () => {
  it("the config's defaults are the server's defaults", () => {
    const { limits } = configSchema.parse({}).gateway;
    expect({
      headersTimeoutMs: limits.headers_timeout_ms,
      requestTimeoutMs: limits.request_timeout_ms,
      keepAliveTimeoutMs: limits.keep_alive_timeout_ms,
      sendTimeoutMs: limits.send_timeout_ms,
      maxConnections: limits.max_connections,
      streamQueueBytes: limits.stream_queue_bytes,
      maxStreams: limits.max_streams,
      idempotencyKeys: limits.idempotency_keys,
      idempotencyBytes: limits.idempotency_bytes,
      responsesKept: limits.responses_kept,
      responsesBytes: limits.responses_bytes,
    }).toEqual(DEFAULT_LIMITS);
    // Seconds, not node's minutes.
    expect(DEFAULT_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(10_000);
    expect(DEFAULT_LIMITS.requestTimeoutMs).toBeLessThanOrEqual(30_000);
  });

  it("a headers timeout longer than the request timeout is refused before listening", async () => {
    const h = harness();
    await expect(
      startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", limits: { requestTimeoutMs: 5_000 } }),
    ).rejects.toThrow("the headers timeout (10000 ms) must not be more than the request timeout (5000 ms)");
  });

  it("a connection that sends nothing is closed by the headers timeout", async () => {
    const running = await serve(harness(), { limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const silent = await connect(running.port);
    expect(await within("the headers timeout to close the silent connection", silent.closed)).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a connection that sends half its headers is closed by the headers timeout", async () => {
    const running = await serve(harness(), { limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const slow = await connect(running.port, "POST /v1/chat HTTP/1.1\r\nHost: localhost\r\n");
    expect(await within("the headers timeout to close the half-sent connection", slow.closed)).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a request whose body never arrives in full is closed by the request timeout, and runs nothing", async () => {
    const h = harness();
    const running = await serve(h, { limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const head = "POST /v1/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
    const stalled = await connect(running.port, `${head}{"message":`);
    await within("the request timeout to close the stalled connection", stalled.closed);
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("a client waiting for 100 Continue is refused on its headers without it: a body over the limit (413), no token (401); a turn's body gets it", async () => {
    const h = harness();
    const running = await serve(h, { token: "s3cret" });
    const expecting = (length: number, auth = "Authorization: Bearer s3cret\r\n") =>
      `POST /v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    const tooLarge = await connect(running.port, expecting(MAX_BODY_BYTES + 1));
    const refused = await within("the 413 and the connection closed", tooLarge.closed);
    expect(refused).toMatch(/^HTTP\/1\.1 413 /);
    expect(refused).not.toContain("100 Continue");
    const anonymous = await connect(running.port, expecting(16, ""));
    const unauthorized = await within("the 401 and the connection closed", anonymous.closed);
    expect(unauthorized).toMatch(/^HTTP\/1\.1 401 /);
    expect(unauthorized).not.toContain("100 Continue");
    expect(h.runtime.sessionKeys()).toEqual([]);

    const body = '{"message":"/help"}';
    const accepted = await connect(running.port, expecting(body.length));
    let got = "";
    accepted.socket.on("data", (chunk: string) => (got += chunk));
    await waitFor("100 Continue", () => got.length > 0, { instead: () => got });
    expect(got).toBe("HTTP/1.1 100 Continue\r\n\r\n");
    accepted.socket.write(body);
    await waitFor("the turn's answer", () => /HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{/.test(got), { instead: () => got });
  });

  it("an idle kept-alive connection is closed after the keep-alive timeout", async () => {
    const running = await serve(harness(), { limits: { keepAliveTimeoutMs: 200 } });
    const client = await connect(running.port, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const received = await within("the keep-alive timeout to close the idle connection", client.closed);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toContain('{"status":"ok"}');
  });

  it("a turn that takes longer than the request timeout still gets its answer", async () => {
    const model = await FakeModelServer.start(() => ({ ...textCompletion("worth the wait"), delayMs: 1_000 }));
    onTestFinished(() => model.close());
    const running = await serve(harness({ config: openaiConfig(model.url) }), { limits: { headersTimeoutMs: 200, requestTimeoutMs: 300 } });
    const answer = await send(`${running.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"message":"hi"}' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).reply).toBe("worth the wait");
  });

  it("1,100 idle connections do not lock out a real client", { timeout: 120_000 }, async () => {
    const h = harness();
    // max_connections stays at its default, below 1,100: idle connections make room for new ones. The headers
    // timeout is short, but longer than opening 1,100 connections takes, so they are all open when the client comes.
    const running = await serve(h, { limits: { headersTimeoutMs: 5_000, requestTimeoutMs: 5_000 } });
    const idle: RawConnection[] = [];
    for (let batch = 0; batch < 11; batch++) idle.push(...(await Promise.all(Array.from({ length: 100 }, () => connect(running.port)))));
    const answer = await send(`${running.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"message":"still here"}' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).reply).toMatch(/^You said: still here/);
    // None of them stays: each is closed to make room or by the headers timeout.
    await within("the server to close all 1,100 idle connections", Promise.all(idle.map((connection) => connection.closed)), { ms: 60_000 });
  });

  it("event streams cannot take every connection: past max_streams one more is 503 too_many_streams, /health and chat still answer, and a closed stream gives its slot back", {
    timeout: 60_000,
  }, async () => {
    const h = harness();
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, maxConnections: 20, maxStreams: 50 } });
    // 50 asked, but at most the connection cap less a tenth: 18 of 20.
    const streams = [];
    for (let i = 0; i < 18; i++) streams.push(await openEvents(running.url, `agent:main:http:s${i}`));
    const refused = await send(`${running.url}/v1/sessions/agent:main:http:more/events`, {});
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toEqual({
      code: "too_many_streams",
      message: "18 event streams are open (gateway.limits.max_streams); close one, or try again later",
    });
    expect((await send(`${running.url}/health`, {})).status).toBe(200);
    const chat = await send(`${running.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"message":"room left"}' });
    expect(chat.status).toBe(200);
    // One closes: its slot is back.
    streams[0]!.response.destroy();
    await eventually(async () => {
      const again = await openEvents(running.url, "agent:main:http:later").catch((error: Error) => error);
      expect(again).not.toBeInstanceOf(Error);
    });
  });

  it("HEAD requests on event streams take no stream slot: after twenty, max_streams streams still open, and a HEAD past the cap is 503 as a GET", {
    timeout: 60_000,
  }, async () => {
    const h = harness();
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, maxStreams: 3 } });
    for (let i = 0; i < 20; i++) {
      const head = await send(`${running.url}/v1/sessions/agent:main:http:h${i}/events`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers["content-type"]).toBe("text/event-stream");
    }
    const streams = [];
    for (let i = 0; i < 3; i++) streams.push(await openEvents(running.url, `agent:main:http:s${i}`));
    const full = await send(`${running.url}/v1/sessions/agent:main:http:h0/events`, { method: "HEAD" });
    expect(full.status).toBe(503);
  });

  it("a GET of an event stream with a body is refused 400 and takes no stream slot (unread, a large body hid the client's leaving until request_timeout_ms)", {
    timeout: 60_000,
  }, async () => {
    const h = harness();
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, maxStreams: 3 } });
    const { port } = new URL(running.url);
    for (let i = 0; i < 5; i++) {
      const body = "x".repeat(100_000);
      const { closed } = await connect(
        Number(port),
        `GET /v1/sessions/agent:main:http:b${i}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      const answer = await within("the refusal, and the connection closed", closed);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toContain('{"error":{"code":"invalid_request","message":"GET .../events takes no request body"}}');
    }
    for (let i = 0; i < 3; i++) await openEvents(running.url, `agent:main:http:s${i}`);
  });

  it("clients that never take a large answer hold neither the connections nor its bytes: such a connection goes first when room is needed, and the rest after send_timeout_ms", {
    timeout: 60_000,
  }, async () => {
    // A history page of some 9 MB: more than the socket buffers on both sides take.
    const h = harness({ config: { agents: { defaults: { max_history_bytes: 16 * 1024 * 1024 } } } });
    const big = "x".repeat(900_000);
    for (let i = 0; i < 5; i++) expect((await h.chat({ message: `${i} ${big}`, session: "big" })).status).toBe(200);
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, maxConnections: 4, sendTimeoutMs: 1_500 } });
    const { port } = new URL(running.url);
    const stalled = [];
    for (let i = 0; i < 4; i++) {
      const connection = await connect(Number(port), "GET /v1/sessions/agent:main:http:big/history?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      // The answer's first bytes taken, then no more: the clock of send_timeout_ms starts once the server is writing
      // (on a loaded machine the page may take a while to make, and a fixed wait from the request could end before it).
      await within("the answer's first bytes", new Promise((resolve) => connection.socket.once("data", resolve)));
      connection.socket.pause();
      stalled.push(connection);
    }
    // Every connection holds an answer nobody takes: the newcomer gets the room one of them held.
    expect((await send(`${running.url}/health`)).status).toBe(200);
    // The rest are closed once send_timeout_ms has passed: once it reads again, each client finds its connection
    // closed part-way through its answer.
    await new Promise((resolve) => setTimeout(resolve, 1_500 + 3_000));
    for (const { socket, closed } of stalled) {
      socket.resume();
      const got = await within("a stalled connection's end", closed);
      expect(got).toMatch(/^HTTP\/1\.1 200 /);
      expect(got.length).toBeLessThan(9_000_000);
    }
  });

  it("a connection that is only silent (its turn waits for the model) outlives send_timeout_ms and gets its answer; an idle one still goes after the keep-alive timeout", {
    timeout: 60_000,
  }, async () => {
    const model = await FakeModelServer.start(() => ({ ...textCompletion("slow but sure"), delayMs: 1_500 }));
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url) });
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, sendTimeoutMs: 300, keepAliveTimeoutMs: 400 } });
    const agent = new http.Agent({ keepAlive: true });
    onTestFinished(() => agent.destroy());
    const answer = await send(`${running.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"message":"take your time"}',
      agent,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).reply).toBe("slow but sure");
    await within("the idle connection closed by the keep-alive timeout", answer.connectionClosed);
  });

  it("a connection busy with a request is never closed to make room", { timeout: 60_000 }, async () => {
    const h = harness();
    const running = await serve(h, { limits: { maxConnections: 3 } });
    const stream = await openEvents(running.url, "agent:main:http:watched");
    for (let i = 0; i < 50; i++) await connect(running.port);
    const answer = await send(`${running.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"message":"hello","session":"watched"}',
    });
    expect(answer.status).toBe(200);
    // The stream outlived fifty newcomers and still delivers.
    await stream.until("event: delivery");
    expect(stream.text()).toContain("You said: hello");
  });

  it("when every connection is busy a newcomer is refused, the operator is told once, and room comes back", { timeout: 60_000 }, async () => {
    // Two requests whose answers take long hold both connections (event streams could not: they may take only part of them).
    const model = await FakeModelServer.start(() => ({ ...textCompletion("late"), delayMs: 30_000 }));
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url) });
    const running = await serve(h, { limits: { ...DEFAULT_LIMITS, maxConnections: 2 } });
    const busy = (session: string) => {
      const request = http.request(`${running.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, agent: false });
      request.on("error", () => {});
      request.end(JSON.stringify({ message: "hold on", session }));
      return request;
    };
    const first = busy("one");
    busy("two");
    await waitFor("both requests to reach the model", () => model.requests.length === 2, { instead: () => `it got ${model.requests.length}` });
    await expect(send(`${running.url}/health`)).rejects.toThrow();
    await expect(send(`${running.url}/health`)).rejects.toThrow();
    expect(h.logger.lines.filter((line) => line.level === "warn").map((line) => line.message)).toEqual([
      "gateway.limits.max_connections (2) reached with every connection busy: refusing new connections",
    ]);
    first.destroy();
    // The server learns of the close when it learns of it: ask until it has.
    let answer: Answer | undefined;
    await waitFor("a newcomer to be let in once a busy connection closed", async () => {
      answer = await send(`${running.url}/health`).catch(() => undefined);
      return answer !== undefined;
    });
    expect(answer!.status).toBe(200);
  });
});

describe("an early answer on a kept-alive connection", () => {
  const json = { "content-type": "application/json" };
  it.each([
    ["a body over 1 MiB", 413, {}, { method: "POST", headers: json, body: Buffer.alloc(2 * 1024 * 1024, " ") }],
    // No Content-Length to judge by: the bytes are counted as they come.
    ["a chunked body over 1 MiB", 413, {}, { method: "POST", headers: { ...json, "transfer-encoding": "chunked" }, body: Buffer.alloc(2 * 1024 * 1024, " ") }],
    ["a text/plain body", 415, {}, { method: "POST", headers: { "content-type": "text/plain" }, body: '{"message":"hi"}' }],
    ["no token", 401, { token: "s3cret" }, { method: "POST", headers: json, body: '{"message":"hi"}' }],
    ["a foreign origin", 403, {}, { method: "POST", headers: { ...json, origin: "https://evil.example" }, body: '{"message":"hi"}' }],
  ] as const)("after %s (%i) closes the connection, and the client's next request works", { timeout: 60_000 }, async (_what, status, opts, init) => {
    const h = harness();
    const running = await serve(h, opts);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    onTestFinished(() => agent.destroy());
    const refused = await send(`${running.url}/v1/chat`, { ...init, headers: { ...init.headers }, agent });
    expect(refused.status).toBe(status);
    expect(refused.headers.connection).toBe("close");
    await within(`the connection to close after the ${status}`, refused.connectionClosed);
    const next = await send(`${running.url}/health`, { agent });
    expect(next.status).toBe(200);
    expect(next.reused).toBe(false);
    expect(h.runtime.sessionKeys()).toEqual([]);
  });
});

describe("the gateway command", () => {
  it("serves the config's origins, hosts and limits", { timeout: 120_000 }, async () => {
    const project = writeProject({
      config: {
        gateway: {
          allowed_origins: ["https://app.example.com"],
          allowed_hosts: ["myhost.lan"],
          limits: { headers_timeout_ms: 300, request_timeout_ms: 600 },
        },
      },
    });
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
      cwd: project,
      env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_GATEWAY_TOKEN: "", PICOCLAW_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    onTestFinished(() => void child.kill("SIGKILL"));
    const url = await listeningUrl(child);
    const port = Number(new URL(url).port);

    const preflight = await send(`${url}/v1/chat`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("https://app.example.com");
    expect((await send(`${url}/v1/agents`, { headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect((await send(`${url}/v1/agents`, { headers: { host: `myhost.lan:${port}` } })).status).toBe(200);
    expect((await send(`${url}/v1/agents`, { headers: { host: `other.lan:${port}` } })).status).toBe(403);
    expect(await within("headers_timeout_ms to close a silent connection", (await connect(port)).closed)).toMatch(/^HTTP\/1\.1 408 /);

    child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", exited)).toBe(0);
  });
});

function listeningUrl(child: ChildProcess): Promise<string> {
  let output = "";
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
  return within('the gateway\'s "listening on" line', listening, { instead: () => `its output so far:\n${output}` });
}
