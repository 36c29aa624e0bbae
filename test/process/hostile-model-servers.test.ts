import { describe, expect, it } from "vitest";
import type { ModelEntry } from "../../src/config/schema.js";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import type { ModelProvider } from "../../src/models/provider.js";
import type { TransportOptions } from "../../src/models/transport.js";
import { anthropicSse, messageStart } from "../support/fake-anthropic.js";
import { completionChunk, sseChunks } from "../support/fake-openai.js";
import { hostileServer, pour, sseHead } from "../support/hostile-server.js";
import { ask, instantRetries, modelEntry, modelFailure } from "../support/models.js";
import { ManualTimers } from "../support/timers.js";
import { eventually, within } from "../support/wait.js";

/**
 * Model servers that never stop sending, send only keep-alives, or send an
 * error body of 100 MB, over real HTTP in each provider's wire format. A
 * call always ends, holds a bounded amount of what it was sent, and closes
 * the connection.
 */

const MB = 1024 * 1024;

interface Format {
  provider: "openai" | "anthropic";
  make: (entry: ModelEntry, opts: TransportOptions) => ModelProvider;
  /** Data events that open an answer before its text (none for OpenAI). */
  prelude: string[];
  /** One data event carrying a piece of the answer's text. */
  text: (text: string) => string;
  /** A data event that carries nothing (still real data on the wire). */
  empty: string;
  /** What the server sends to keep the connection alive: an SSE comment, or Anthropic's ping event. */
  keepAlive: string;
}

const formats: Format[] = [
  {
    provider: "openai",
    make: (entry, opts) => new OpenAIProvider(entry, opts),
    prelude: [],
    text: (text) => sseChunks([completionChunk({ content: text })], { done: false })[0]!,
    empty: sseChunks([completionChunk(null)], { done: false })[0]!,
    keepAlive: ": keep-alive\n\n",
  },
  {
    provider: "anthropic",
    make: (entry, opts) => new AnthropicProvider(entry, opts),
    prelude: anthropicSse([messageStart(), { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]),
    text: (text) => anthropicSse([{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }])[0]!,
    empty: anthropicSse([{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "" } }])[0]!,
    keepAlive: anthropicSse([{ type: "ping" }])[0]!,
  },
];

describe.each(formats)("$provider: a hostile model server", (format) => {
  const provider = (url: string, extra: Partial<ModelEntry> = {}, opts: TransportOptions = {}) =>
    format.make(modelEntry(format.provider, url, extra), instantRetries(opts));

  it("an endless stream of text fails model_bad_response past 1 MiB of text, keeps nothing and closes the connection", async () => {
    const server = await hostileServer(async (res) => {
      sseHead(res);
      const piece = "x".repeat(16 * 1024);
      return pour(res, (i) => (i < format.prelude.length ? format.prelude[i] : format.text(piece)));
    });
    const error = await modelFailure(provider(server.url).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the answer's text is over 1 MiB, more than an answer may hold; nothing of it was kept");
    const poured = await within("the answer's end at the server", server.answers[0]!);
    expect(poured.cut).toBe(true);
    expect(server.answers).toHaveLength(1);
  });

  it("an endless stream of data events that carry nothing is ended by max_duration", async () => {
    const timers = new ManualTimers();
    const server = await hostileServer(async (res) => {
      sseHead(res);
      return pour(res, (i) => (i < format.prelude.length ? format.prelude[i] : format.empty), 1);
    });
    const failure = modelFailure(provider(server.url, { request_timeout: 50, max_duration: 9000 }, { timer: timers.timer }).chat(ask()));
    // Each event is real data: it restarts request_timeout, again and again.
    await eventually(() => expect(timers.started.filter((t) => t.ms === 50).length).toBeGreaterThan(20));
    expect(timers.fireAll(9000)).toBe(1);
    const error = await failure;
    expect(error.code).toBe("model_timeout");
    expect(error.message).toMatch(/no complete answer from http:\/\/127\.0\.0\.1:\d+ within 9000 ms \(max_duration\)/);
    expect((await within("the answer's end at the server", server.answers[0]!)).cut).toBe(true);
  });

  it("a stream of nothing but keep-alives ends in model_timeout (request_timeout), however long it goes on", async () => {
    const timers = new ManualTimers();
    let sent = 0;
    const server = await hostileServer(async (res) => {
      sseHead(res);
      return pour(
        res,
        (i) => {
          sent = i;
          return format.keepAlive;
        },
        1,
      );
    });
    const failure = modelFailure(provider(server.url, { request_timeout: 50 }, { timer: timers.timer }).chat(ask()));
    const idleTimers = () => timers.started.filter((t) => t.ms === 50).length;
    // The attempt's start, then the answer's headers; no keep-alive restarts it after that.
    await eventually(() => expect(idleTimers()).toBeGreaterThanOrEqual(2));
    const before = sent;
    await eventually(() => expect(sent).toBeGreaterThan(before + 50));
    expect(idleTimers()).toBe(2);
    expect(timers.fireAll(50)).toBe(1);
    const error = await failure;
    expect(error.code).toBe("model_timeout");
    expect(error.message).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+ within 50 ms \(request_timeout\)/);
    expect((await within("the answer's end at the server", server.answers[0]!)).cut).toBe(true);
  });

  it("keep-alives do not hold off request_timeout: only data restarts it", async () => {
    const timers = new ManualTimers();
    const script = [...format.prelude, format.text("a"), ...Array.from({ length: 100 }, () => format.keepAlive), format.text("b")];
    const server = await hostileServer(async (res) => {
      sseHead(res);
      // Then keep-alives without end, as a server that lost its model but not its connection.
      return pour(res, (i) => script[i] ?? format.keepAlive, 1);
    });
    const texts: string[] = [];
    let sawB!: () => void;
    const b = new Promise<void>((resolve) => (sawB = resolve));
    const failure = modelFailure(
      provider(server.url, { request_timeout: 50 }, { timer: timers.timer }).chat(ask(), (delta) => {
        if (delta.type !== "text") return;
        texts.push(delta.text);
        if (delta.text === "b") sawB();
      }),
    );
    await within('the text "b"', b);
    // The attempt's start, the answer's headers, and each data event: the 100 keep-alives before "b" count for nothing.
    const dataEvents = format.prelude.length + 2;
    expect(timers.started.filter((t) => t.ms === 50)).toHaveLength(2 + dataEvents);
    expect(timers.fireAll(50)).toBe(1);
    const error = await failure;
    expect(error.code).toBe("model_timeout");
    expect(error.message).toContain("within 50 ms (request_timeout)");
    expect(texts).toEqual(["a", "b"]);
    expect((await within("the answer's end at the server", server.answers[0]!)).cut).toBe(true);
  });

  it("an event that never ends fails model_bad_response once the stream passed 8 MiB without one", async () => {
    const server = await hostileServer(async (res) => {
      sseHead(res);
      const piece = "y".repeat(64 * 1024);
      return pour(res, (i) => (i === 0 ? "data: " : piece));
    });
    const error = await modelFailure(provider(server.url).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the stream sent over 8 MiB without completing an event");
    const poured = await within("the answer's end at the server", server.answers[0]!);
    expect(poured.cut).toBe(true);
    expect(poured.bytes).toBeLessThan(100 * MB);
  });

  it("a 100 MB error body is read only up to a few KB, and the connection is closed", async () => {
    const server = await hostileServer(async (res) => {
      res.writeHead(400, { "content-type": "text/plain" });
      const piece = Buffer.alloc(64 * 1024, "e");
      return pour(res, (i) => (i === 0 ? "the request was bad: " : i * piece.byteLength < 100 * MB ? piece : undefined));
    });
    const error = await modelFailure(provider(server.url).chat(ask()));
    expect(error.code).toBe("model_bad_request");
    expect(error.message).toMatch(/^model "\w+": HTTP 400: the request was bad: e+…$/);
    expect(error.message.length).toBeLessThan(400);
    const poured = await within("the answer's end at the server", server.answers[0]!);
    expect(poured.cut).toBe(true);
    expect(poured.bytes).toBeLessThan(100 * MB);
  });

  it("a 100 MB answer that is not streamed fails model_bad_response past 8 MiB", async () => {
    const server = await hostileServer(async (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const piece = Buffer.alloc(64 * 1024, " ");
      return pour(res, (i) => (i === 0 ? '{"choices":[{"message":{"content":"' : i * piece.byteLength < 100 * MB ? piece : undefined));
    });
    const error = await modelFailure(provider(server.url, { stream: false }).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the answer is over 8 MiB, more than an answer may hold; nothing of it was kept");
    const poured = await within("the answer's end at the server", server.answers[0]!);
    expect(poured.cut).toBe(true);
    expect(poured.bytes).toBeLessThan(100 * MB);
  });
});

describe("openai: tool-call arguments sent as JSON nested thousands deep", () => {
  it("are model_bad_response at once: not a network failure, not retried", async () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const server = await hostileServer(async (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const body = `{"choices":[{"message":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":{"x":${deep}}}}]},"finish_reason":"tool_calls"}]}`;
      res.end(body);
      return { bytes: Buffer.byteLength(body), cut: false };
    });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url, { stream: false }), instantRetries({})).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the answer's tool-call arguments cannot be read back as JSON");
    expect(server.answers).toHaveLength(1);
  });
});
