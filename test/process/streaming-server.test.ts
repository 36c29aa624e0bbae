import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import OpenAI from "openai";
import { describe, expect, it, onTestFinished } from "vitest";
import { startGateway } from "../../src/gateway/server.js";
import { harness } from "../support/project.js";
import { sseReader } from "../support/sse.js";
import { testTools } from "../support/tools.js";
import { waitFor, within } from "../support/wait.js";
import { WireModel, wireConfig } from "../support/wire-model.js";

/** Streamed answers through the real node server: pieces leave as they come, and a client that hangs up stops its turn. */

async function served(opts: Parameters<typeof harness>[0] = {}) {
  const h = harness({ tools: testTools, ...opts });
  const running = await startGateway({ runtime: h.runtime, logger: h.logger, host: "127.0.0.1", port: 0, token: "" });
  onTestFinished(() => running.close());
  return { h, url: running.url };
}

/** POSTs `body` over `agent` and resolves with the whole answer and whether it came on a socket used before. */
function post(url: string, agent: Agent, body: unknown): Promise<{ status: number; text: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** Writes `raw` to the gateway on a new connection; resolves with what came back once the gateway closes it. */
function untilClosed(url: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return within(
    "the gateway to close the connection",
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      let got = "";
      socket.on("data", (chunk) => (got += chunk.toString()));
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      socket.write(raw);
    }),
  );
}

describe("streamed answers on the node server", () => {
  it("a streamed answer to a client that asked for Connection: close says so and closes the connection when it ends", async () => {
    const { url } = await served();
    const body = JSON.stringify({ message: "hello", session: "closing", stream: true });
    const host = new URL(url).host;
    const answer = await untilClosed(
      url,
      `POST /v1/chat HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).not.toMatch(/\r\nconnection: keep-alive\r\n/i);
    expect(answer).toContain("event: turn.end");
  });

  it("a client that leaves in the middle of its request's body is logged as a client that went away, not as the gateway's failure", async () => {
    const { h, url } = await served();
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(`POST /v1/chat HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n{"message"`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.resetAndDestroy();
    await waitFor("the request's end to be logged", () => h.logger.lines.some((line) => line.message.includes("POST /v1/chat")));
    const lines = h.logger.lines.filter((line) => line.message.includes("POST /v1/chat"));
    expect(lines.filter((line) => line.level === "error")).toEqual([]);
    expect(lines.map((line) => line.message).join("\n")).toMatch(/went away/);
  });

  it("streamed answers one after another on one kept-alive connection leave no listener behind on its socket (no MaxListenersExceededWarning)", async () => {
    const { url } = await served();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const answers = [];
      for (let i = 0; i < 12; i++) answers.push(await post(`${url}/v1/chat`, agent, { message: `hello ${i}`, session: "kept", stream: true }));
      expect(answers.every((a) => a.status === 200 && a.text.includes("event: turn.end"))).toBe(true);
      expect(answers.slice(1).every((a) => a.reused)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      agent.destroy();
    }
  });

  it("the OpenAI SDK, over a real socket, gets each piece of the model's text before the model has finished", async () => {
    const model = new WireModel();
    const { url } = await served({ config: wireConfig(), models: { fetch: model.fetch } });
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "no-token-set", maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: "main", stream: true, messages: [{ role: "user", content: "count" }] });
    const chunks = stream[Symbol.asyncIterator]();
    expect((await chunks.next()).value.choices[0].delta).toEqual({ role: "assistant", content: "" });
    const call = await model.call(1);
    for (const piece of ["one", " two", " three"]) {
      call.text(piece);
      // The model has not finished: this piece reached the client on its own.
      expect((await chunks.next()).value.choices[0].delta).toEqual({ content: piece });
    }
    call.finish();
    expect((await chunks.next()).value.choices[0].finish_reason).toBe("stop");
    expect((await chunks.next()).done).toBe(true);
  });

  it("a client that hangs up mid-stream aborts its turn: the model call is cancelled, the session's events see the turn end aborted, the history is unchanged", async () => {
    const model = new WireModel();
    const { h, url } = await served({ config: wireConfig(), models: { fetch: model.fetch } });
    const key = "agent:main:http:gone";
    const watcher = sseReader(await fetch(`${url}/v1/sessions/${key}/events`));
    const req = httpRequest(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" } });
    const firstBytes = new Promise<void>((resolve) => req.on("response", (res) => res.once("data", () => resolve())));
    req.end(JSON.stringify({ message: "talk", session: "gone", stream: true }));
    const call = await model.call(1);
    call.text("partial");
    await within("the streamed answer's first bytes at the client", firstBytes);
    req.destroy();
    const seen = await watcher.until("turn.end");
    expect(seen.at(-1)!.data).toEqual({ agent: "main", session_key: key, outcome: "aborted" });
    expect(call.aborted).toBe(true);
    expect(await h.runtime.historyOf(key)).toEqual([]);
    await watcher.close();
  });
});
