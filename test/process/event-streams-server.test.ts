import { connect } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import type { Feature, FeatureHost } from "../../src/port/feature.js";
import { startGateway } from "../../src/gateway/server.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { harness } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

/** Event streams through the real node server: shutdown, and a client that stops reading its socket. */

const KEY = "agent:main:http:s";

function gateway() {
  let host: FeatureHost | undefined;
  let open: (() => void) | undefined;
  const gateOpened = new Promise<void>((resolve) => (open = resolve));
  let entered: (() => void) | undefined;
  const gateEntered = new Promise<void>((resolve) => (entered = resolve));
  const gate = defineTool({
    name: "gate",
    description: "Waits until the test opens it.",
    parameters: z.object({}),
    enabledByDefault: true,
    execute: async () => {
      entered!();
      await gateOpened;
      return toolResult.user("the gate opened");
    },
  });
  const capture: Feature = {
    name: "capture",
    needs: ["deliverLater", "notify"],
    setup: (given) => {
      host = given;
      return {};
    },
  };
  const h = harness({ tools: [gate], features: [capture] });
  return { h, deliver: (text: string) => host!.deliverLater("main", KEY, { from: "agent", text }), openGate: open!, gateEntered };
}

/** Reads a response body to its end; the text, and whether it ended cleanly (not cut). */
async function readToEnd(body: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<{ text: string; clean: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, clean: true };
      text += decoder.decode(value, { stream: true });
      onText(text);
    }
  } catch {
    return { text, clean: false };
  }
}

describe("event streams on the node server", () => {
  it("on shutdown a stream gets what was queued, the running turn's deliveries, a shutdown event, and then ends cleanly", async () => {
    const { h, deliver, openGate, gateEntered } = gateway();
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "", graceMs: 60_000 });
    onTestFinished(() => running.close());
    const res = await fetch(`${running.url}/v1/sessions/${KEY}/events`);
    let seen = "";
    let connected: () => void = () => {};
    const isConnected = new Promise<void>((resolve) => (connected = resolve));
    const reading = readToEnd(res.body!, (text) => {
      seen = text;
      if (text.startsWith(": connected")) connected();
    });
    await within('the event stream\'s ": connected" line', isConnected);
    deliver("before");
    const turn = fetch(`${running.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "CALL gate {}", session: "s" }),
    });
    await within("the turn to enter the gate tool", gateEntered);
    const closing = running.close();
    // The gateway is stopping, and waits for the running turn: the stream is still open.
    await eventually(() => expect(seen).toContain('"text":"before"'));
    openGate();
    expect((await turn).status).toBe(200);
    const { text, clean } = await within("the event stream to end after the shutdown", reading, { instead: () => `it got: ${seen}` });
    await closing;
    expect(clean).toBe(true);
    const events = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(["delivery", "turn.start", "delivery", "delivery", "turn.end", "shutdown"]);
    expect(text).toContain('data: {"from":"gate","text":"the gate opened"}');
    expect(text.endsWith('event: shutdown\ndata: {"reason":"the gateway is shutting down"}\n\n')).toBe(true);
  });

  it("a client that stops reading its socket is cut; its deliveries are kept for the session", async () => {
    const { h, deliver } = gateway();
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const socket = connect(running.port, "127.0.0.1");
    onTestFinished(() => {
      socket.destroy();
    });
    await within("the connection to the gateway", new Promise<void>((resolve) => socket.once("connect", resolve)));
    socket.write(`GET /v1/sessions/${KEY}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    let received = 0;
    await within(
      "the event stream's first bytes",
      new Promise<void>((resolve) =>
        socket.once("data", (chunk: Buffer) => {
          received += chunk.length;
          resolve();
        }),
      ),
    );
    // From now on the client reads nothing: the socket's buffers fill, then the stream's queue.
    socket.pause();
    let closedByServer = false;
    socket.on("error", () => {});
    socket.once("close", () => (closedByServer = true));
    const text = "x".repeat(64 * 1024);
    let sent = 0;
    const overflowed = () => h.logger.lines.some((l) => l.message.startsWith(`closed an event stream of ${KEY}: its client stopped reading`));
    while (!overflowed()) {
      deliver(`${sent++} ${text}`);
      // Let the server write what the socket takes.
      await new Promise((resolve) => setImmediate(resolve));
      expect(sent, "deliveries sent without the server cutting the stream of a client that reads nothing").toBeLessThan(10_000);
    }
    const kept = await h.runtime.takeDeliveries(KEY);
    expect(kept.length).toBeGreaterThan(0);
    // What the client did not get is what is kept: the newest, in order, up to the last one sent.
    expect(kept.at(-1)!.text.startsWith(`${sent - 1} `)).toBe(true);
    const firstKept = Number(kept[0]!.text.split(" ")[0]);
    expect(kept.map((d) => Number(d.text.split(" ")[0]))).toEqual(Array.from({ length: sent - firstKept }, (_, i) => firstKept + i));
    expect(received).toBeGreaterThan(0);
    // The connection is cut: once the client reads again, it finds the end.
    socket.resume();
    await eventually(() => expect(closedByServer).toBe(true));
  });
});
