import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { MODEL_CONNECTIONS } from "../../src/models/exchange.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import { completionChunk, sseChunks, textCompletion } from "../support/fake-openai.js";
import { ask, modelEntry } from "../support/models.js";
import { eventually } from "../support/wait.js";
import { listenForTest } from "../support/listen.js";

/**
 * The connections to a model server, over real HTTP: kept alive from one
 * call to the next, whether the answer was streamed or whole, and what a
 * request says about who sends it. (undici frees a connection on the turn
 * of the event loop after its answer ended, so a call made before that
 * takes a second one; from then on the two are reused.)
 */

interface CountingServer {
  url: string;
  /** TCP connections the server accepted so far. */
  readonly connections: number;
  /** The headers of every request, in order. */
  readonly requests: IncomingMessage["headers"][];
}

async function countingServer(answer: (res: ServerResponse) => void): Promise<CountingServer> {
  const requests: IncomingMessage["headers"][] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    req.on("end", () => answer(res));
  });
  server.on("connection", () => connections++);
  const origin = await listenForTest(server);
  return {
    url: `${origin}/v1`,
    get connections() {
      return connections;
    },
    requests,
  };
}

const streamed = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of sseChunks([completionChunk({ content: "ok" }), completionChunk({}, { finish: "stop" })])) res.write(chunk);
  res.end();
};

const whole = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(textCompletion("ok").json));
};

describe("connections to a model server", () => {
  it.each([
    ["streamed", streamed, {}],
    ["whole", whole, { stream: false }],
  ] as const)("calls one after another reuse kept-alive connections instead of opening one each (%s answers)", async (_kind, answer, extra) => {
    const server = await countingServer(answer);
    const provider = new OpenAIProvider(modelEntry("openai", server.url, extra));
    for (let i = 0; i < 10; i++) expect((await provider.chat(ask())).text).toBe("ok");
    expect(server.requests).toHaveLength(10);
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it("an error answer, read whole, leaves its connection for the retry", async () => {
    let requests = 0;
    const server = await countingServer((res) => {
      if (++requests % 2 === 1) {
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "busy" } }));
      } else streamed(res);
    });
    const provider = new OpenAIProvider(modelEntry("openai", server.url), { sleep: async () => {} });
    for (let i = 0; i < 5; i++) expect((await provider.chat(ask())).text).toBe("ok");
    expect(server.requests).toHaveLength(10);
    expect(server.connections).toBeLessThanOrEqual(2);
  });

  it("a request names its sender in user-agent, which custom_headers may replace", async () => {
    const server = await countingServer(streamed);
    await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    await new OpenAIProvider(modelEntry("openai", server.url, { custom_headers: { "User-Agent": "my-agent/1.0" } })).chat(ask());
    expect(server.requests.map((h) => h["user-agent"])).toEqual(["picoclaw-ts", "my-agent/1.0"]);
  });
  it(`at most ${MODEL_CONNECTIONS.perOrigin} connections to one server at once: a further call waits for one to come free`, async () => {
    const held: ServerResponse[] = [];
    const server = await countingServer((res) => held.push(res));
    const provider = new OpenAIProvider(modelEntry("openai", server.url));
    const limit = MODEL_CONNECTIONS.perOrigin;
    const calls = Array.from({ length: limit + 2 }, () => provider.chat(ask()));
    await eventually(() => expect(held).toHaveLength(limit));
    expect(server.connections).toBe(limit);
    // One answer ends: a waiting call takes its connection, and then the next one.
    streamed(held.shift()!);
    await eventually(() => expect(server.requests).toHaveLength(limit + 1));
    streamed(held.shift()!);
    await eventually(() => expect(server.requests).toHaveLength(limit + 2));
    expect(server.connections).toBe(limit);
    for (const res of held.splice(0)) streamed(res);
    for (const call of calls) expect((await call).text).toBe("ok");
  });
});
