import http from "node:http";
import { describe, expect, it, onTestFinished } from "vitest";
import { type GatewayOptions, type RunningGateway, startGateway } from "../src/gateway/server.js";
import { type Harness, harness } from "./support/project.js";

/** The gateway on a real socket (127.0.0.1, any port), closed when the test ends. */
async function serve(h: Harness, opts: Partial<GatewayOptions> = {}): Promise<RunningGateway> {
  const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", ...opts });
  onTestFinished(() => running.close());
  return running;
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

describe("an early answer on a kept-alive connection", () => {
  const json = { "content-type": "application/json" };
  it.each([
    ["a body over 1 MiB", 413, {}, { method: "POST", headers: json, body: Buffer.alloc(2 * 1024 * 1024, " ") }],
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
    await refused.connectionClosed;
    const next = await send(`${running.url}/health`, { agent });
    expect(next.status).toBe(200);
    expect(next.reused).toBe(false);
    expect(h.runtime.sessionKeys()).toEqual([]);
  });
});
