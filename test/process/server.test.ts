import { connect } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { startGateway } from "../../src/gateway/server.js";
import type { RuntimeEvents } from "../../src/port/events.js";
import { FakeModelServer, textCompletion, toolCallCompletion } from "../support/fake-openai.js";
import { harness, openaiConfig } from "../support/project.js";
import { testTools } from "../support/tools.js";
import { waitFor, within } from "../support/wait.js";

describe("the node server", () => {
  it("warns loudly when told to bind beyond loopback without a token", async () => {
    const h = harness();
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "0.0.0.0", port: 0, token: "" });
    onTestFinished(() => running.close());
    expect(
      h.logger.lines
        .filter((l) => l.level === "warn")
        .map((l) => l.message)
        .join("\n"),
    ).toMatch(/^WARNING: binding to 0\.0\.0\.0 with NO token/);
    const quiet = harness();
    const local = await startGateway({ runtime: quiet.runtime, logger: quiet.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => local.close());
    expect(quiet.logger.lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("a port in use is a clear error", async () => {
    const h = harness();
    const first = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => first.close());
    await expect(startGateway({ runtime: harness().runtime, logger: h.logger, host: "127.0.0.1", port: first.port, token: "" })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${first.port}: the port is in use`,
    );
  });

  it("a client of a streamed answer that disconnects aborts its turn, down to the model request", async () => {
    let calls = 0;
    const model = await FakeModelServer.start(() =>
      ++calls === 1 ? toolCallCompletion([{ name: "echo", args: { text: "first" } }]) : { ...textCompletion("too late"), delayMs: 30_000 },
    );
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url), tools: testTools });
    const ended = new Promise<RuntimeEvents["turn.end"]>((resolve) => h.runtime.on("turn.end", resolve));
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const client = new AbortController();
    const res = await fetch(`${running.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hi", stream: true }),
      signal: client.signal,
    });
    await waitFor("the model's second request", () => model.requests.length > 1, { instead: () => `it got ${model.requests.length}` });
    client.abort();
    await res.body?.cancel().catch(() => {});
    expect((await within("the turn's end", ended)).outcome).toBe("aborted");
    expect(await h.runtime.historyOf("agent:main:http:default")).toEqual([]);
  });

  it("an unstreamed answer whose client sent its FIN (gone, or only done sending: TCP cannot tell) runs to its end and is kept", async () => {
    const model = await FakeModelServer.start(() => ({ ...textCompletion("kept anyway"), delayMs: 300 }));
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url) });
    const ended = new Promise<RuntimeEvents["turn.end"]>((resolve) => h.runtime.on("turn.end", resolve));
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const client = new AbortController();
    const request = fetch(`${running.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
      signal: client.signal,
    }).catch((error: Error) => error);
    await waitFor("the model's first request", () => model.requests.length > 0, { instead: () => "it got none" });
    client.abort();
    expect(await request).toBeInstanceOf(Error);
    expect((await within("the turn's end", ended)).outcome).toBe("done");
    expect((await h.runtime.historyOf("agent:main:http:default")).map((m) => m.content)).toEqual(["hi", "kept anyway"]);
  });

  it("a half-closed client (it shuts its sending side once the request is sent) gets its whole answer, and its turn is kept", async () => {
    const model = await FakeModelServer.start(() => ({ ...textCompletion("worth the wait"), delayMs: 300 }));
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url) });
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const { port } = new URL(running.url);
    const body = JSON.stringify({ message: "hi", session: "half" });
    const answer = await within(
      "the answer on the half-closed connection",
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), "127.0.0.1", () => {
          socket.write(
            `POST /v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
          // The client's FIN: it sends no more, and still reads.
          socket.end();
        });
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      }),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain('"reply":"worth the wait"');
    expect((await h.runtime.historyOf("agent:main:http:half")).map((m) => m.content)).toEqual(["hi", "worth the wait"]);
  });

  it("a streamed answer whose client half-closes ends, on each streamed route: the turn is aborted, the answer finished and the connection closed (it stayed open for good, counted as a stream)", async () => {
    const model = await FakeModelServer.start(() => ({ ...textCompletion("too late"), delayMs: 300 }));
    onTestFinished(() => model.close());
    const h = harness({ config: openaiConfig(model.url) });
    const outcomes: string[] = [];
    h.runtime.on("turn.end", (event) => outcomes.push(event.outcome));
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const { port } = new URL(running.url);
    const requests: [string, unknown][] = [
      ["/v1/chat", { message: "hi", session: "fin", stream: true }],
      ["/v1/chat/completions", { model: "main", stream: true, messages: [{ role: "user", content: "hi" }] }],
      ["/v1/responses", { model: "main", stream: true, input: "hi" }],
    ];
    for (const [route, json] of requests) {
      const body = JSON.stringify(json);
      const answer = await within(
        `the streamed answer of ${route} to end once its client half-closed`,
        new Promise<string>((resolve, reject) => {
          const socket = connect(Number(port), "127.0.0.1", () => {
            socket.write(
              `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            );
            socket.end();
          });
          onTestFinished(() => void socket.destroy());
          let text = "";
          socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
          socket.on("close", () => resolve(text));
          socket.on("error", reject);
        }),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
      // The chunked body's last chunk: the answer was finished, not cut.
      expect(answer.endsWith("0\r\n\r\n")).toBe(true);
    }
    await waitFor("the three turns' ends", () => outcomes.length === 3, { instead: () => `it got ${outcomes.join(", ")}` });
    expect(outcomes).toEqual(["aborted", "aborted", "aborted"]);
  });

  it("DELETE /v1/sessions/<key> over a real connection, with no body and so no Content-Type, clears the session", async () => {
    const h = harness();
    const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
    onTestFinished(() => running.close());
    const said = await fetch(`${running.url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"message":"hello"}' });
    expect(said.status).toBe(200);
    expect(await h.runtime.historyOf("agent:main:http:default")).toHaveLength(2);
    const cleared = await fetch(`${running.url}/v1/sessions/agent:main:http:default`, { method: "DELETE" });
    expect({ status: cleared.status, body: await cleared.json() }).toEqual({ status: 200, body: { cleared: true } });
    expect(await h.runtime.historyOf("agent:main:http:default")).toEqual([]);
    // A body still needs its JSON content type, whatever the method.
    const typed = await fetch(`${running.url}/v1/sessions/agent:main:http:default`, { method: "DELETE", body: "x" });
    expect(typed.status).toBe(415);
  });
});
