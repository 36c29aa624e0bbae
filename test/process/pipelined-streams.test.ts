import { connect } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { MAX_PIPELINED } from "../../src/gateway/connections.js";
import { type ServerLimits, startGateway } from "../../src/gateway/server.js";
import { harness } from "../support/project.js";
import { parsePrometheus } from "../support/prometheus.js";
import { eventually } from "../support/wait.js";

/** Requests pipelined behind another on one connection (HTTP/1.1 answers them in order; Node queues their answers, with no socket). */

const head = (method: string, path: string, body = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : ""}\r\n${body}`;

async function gateway(limits: Partial<ServerLimits> = {}) {
  const h = harness();
  const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", limits: { maxStreams: 2, ...limits } });
  onTestFinished(() => running.close());
  const open = async () => parsePrometheus(await (await fetch(`${running.url}/metrics`)).text()).value("picoclaw_sse_streams_open");
  const total = async (session: string) =>
    ((await (await fetch(`${running.url}/v1/sessions/agent:main:http:${session}/history`)).json()) as { total: number }).total;
  const socket = async () => {
    const s = connect(running.port, "127.0.0.1");
    s.on("error", () => {});
    await new Promise((resolve) => s.once("connect", resolve));
    return s;
  };
  return { running, open, total, socket };
}

describe("pipelined requests on the node server", () => {
  it("a request queued behind an answer that never ends is not run (no stream opened, no turn) and goes with its connection: slots given back", async () => {
    const { running, open, total, socket } = await gateway();
    const chat = (stream: boolean) => JSON.stringify({ message: "x".repeat(40_000), stream, session: "b" });
    for (const second of [head("GET", "/v1/sessions/agent:main:http:b/events"), head("POST", "/v1/chat", chat(true)), head("POST", "/v1/chat", chat(false))]) {
      const s = await socket();
      // The first answer (an event stream) never ends: the second waits behind it.
      s.write(head("GET", "/v1/sessions/agent:main:http:a/events") + second);
      await eventually(async () => expect(await open()).toBe(1));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Its answer could not be written: it was not run (before, its stream opened and its turn ran, for nobody).
      expect(await open()).toBe(1);
      expect(await total("b")).toBe(0);
      s.resetAndDestroy();
      await eventually(async () => expect(await open()).toBe(0));
    }
    // Both slots free again: two streams open.
    const streams = await Promise.all([1, 2].map(() => fetch(`${running.url}/v1/sessions/agent:main:http:c/events`)));
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    for (const r of streams) await r.body!.cancel();
  });

  it("pipelined requests are answered in order, each run once the one before it is answered", async () => {
    const { socket } = await gateway();
    const s = await socket();
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString()));
    const messages = Array.from({ length: 10 }, (_, i) => head("POST", "/v1/chat", JSON.stringify({ message: `m${i}`, session: `s${i % 3}` })));
    s.write(messages.join("") + head("GET", "/health"));
    await eventually(() => expect(text).toContain('{"status":"ok"}'));
    const said = [...text.matchAll(/You said: (m\d+)/g)].map((m) => m[1]);
    expect([...new Set(said)]).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    s.destroy();
  });

  it(`a connection pipelining more than ${MAX_PIPELINED} requests is closed, and none of the queued ones is run`, async () => {
    const { running, open, total, socket } = await gateway();
    const s = await socket();
    const closed = new Promise((resolve) => s.once("close", resolve));
    s.resume();
    const queued = Array.from({ length: MAX_PIPELINED + 1 }, () => head("POST", "/v1/chat", JSON.stringify({ message: "hi", session: "d" })));
    s.write(head("GET", "/v1/sessions/agent:main:http:a/events") + queued.join(""));
    await closed;
    await eventually(async () => expect(await open()).toBe(0));
    expect(await total("d")).toBe(0);
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
  });

  it("the bodies queued on one connection are held up to the body limit together: past it the connection is closed and none of them runs", async () => {
    const { running, open, total, socket } = await gateway();
    const s = await socket();
    const closed = new Promise((resolve) => s.once("close", resolve));
    s.resume();
    // Three bodies of 400 KB, each under the 1 MiB limit, 1.2 MB together.
    const queued = Array.from({ length: 3 }, () => head("POST", "/v1/chat", JSON.stringify({ message: "z".repeat(400_000), session: "f" })));
    s.write(head("GET", "/v1/sessions/agent:main:http:a/events") + queued.join(""));
    await closed;
    await eventually(async () => expect(await open()).toBe(0));
    expect(await total("f")).toBe(0);
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
  });

  it("the body of a request queued behind a long answer is read meanwhile: request_timeout_ms does not cut the connection", async () => {
    const { running, total, socket } = await gateway({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const s = await socket();
    let text = "";
    s.on("data", (d: Buffer) => (text += d.toString()));
    let closed = false;
    s.once("close", () => (closed = true));
    const body = JSON.stringify({ message: "y".repeat(200_000), session: "e" });
    // A long first answer (a turn waiting for its model would do as well): an event stream, ended by the shutdown below.
    s.write(head("GET", "/v1/sessions/agent:main:http:a/events") + head("POST", "/v1/chat", body));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(closed).toBe(false);
    expect(await total("e")).toBe(0);
    await running.close();
    expect(text).toContain("event: shutdown");
  });
});
