import { connect } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { startGateway } from "../../src/gateway/server.js";
import { harness } from "../support/project.js";
import { parsePrometheus } from "../support/prometheus.js";
import { eventually } from "../support/wait.js";

/** A pipelined request whose connection is reset while its answer waits behind the one before it (Node queues it, with no socket). */

const head = (method: string, path: string, body = "") =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${body ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` : ""}\r\n${body}`;

describe("pipelined streams on the node server", () => {
  it("a stream queued behind another ends when its connection is reset: picoclaw_sse_streams_open back to 0, its stream slot given back", async () => {
    const h = harness();
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", limits: { maxStreams: 2 } });
    onTestFinished(() => running.close());
    const open = async () => parsePrometheus(await (await fetch(`${running.url}/metrics`)).text()).value("picoclaw_sse_streams_open");
    const chat = JSON.stringify({ message: "x".repeat(40_000), stream: true, session: "b" });
    for (const second of [head("GET", "/v1/sessions/agent:main:http:b/events"), head("POST", "/v1/chat", chat)]) {
      const socket = connect(running.port, "127.0.0.1");
      socket.on("error", () => {});
      await new Promise((resolve) => socket.once("connect", resolve));
      // The first answer (an event stream) never ends: the second waits behind it.
      socket.write(head("GET", "/v1/sessions/agent:main:http:a/events") + second);
      await eventually(async () => expect(await open()).toBe(2));
      socket.resetAndDestroy();
      await eventually(async () => expect(await open()).toBe(0));
    }
    // Both slots free again: two streams open.
    const streams = await Promise.all([1, 2].map(() => fetch(`${running.url}/v1/sessions/agent:main:http:c/events`)));
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    for (const r of streams) await r.body!.cancel();
  });
});
