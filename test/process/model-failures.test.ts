import { describe, expect, it } from "vitest";
import type { ModelEntry } from "../../src/config/schema.js";
import { AbortedError, ModelError } from "../../src/errors.js";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import type { ModelProvider } from "../../src/models/provider.js";
import { decideRetry, DEFAULT_RETRY_POLICY, realSleep } from "../../src/models/retry.js";
import type { TransportOptions } from "../../src/models/transport.js";
import { anthropicError, anthropicSse, anthropicTextStream, messageStart, textBlock } from "../support/fake-anthropic.js";
import { completionChunk, type Reply, sseChunks } from "../support/fake-openai.js";
import { SECRET_KEY, ask, fakeServer, instantRetries, modelEntry, modelFailure } from "../support/models.js";
import { ManualTimers } from "../support/timers.js";
import { freePort } from "../support/listen.js";
import { eventually, within } from "../support/wait.js";

/** The same failure handling, checked against both wire formats. */
interface Format {
  provider: "openai" | "anthropic";
  make: (entry: ModelEntry, opts?: TransportOptions) => ModelProvider;
  ok: (text: string) => Reply;
  /** A streamed answer that sends `text` and then stalls. */
  stall: (text: string) => Reply;
  error: (status: number, message: string, headers?: Record<string, string>) => Reply;
}

const formats: Format[] = [
  {
    provider: "openai",
    make: (entry, opts) => new OpenAIProvider(entry, opts),
    ok: (text) => ({ chunks: sseChunks([completionChunk({ content: text }), completionChunk({}, { finish: "stop" })]) }),
    stall: (text) => ({ chunks: sseChunks([completionChunk({ content: text })], { done: false }), hold: true }),
    error: (status, message, headers = {}) => ({ status, headers, json: { error: { message, type: "error", code: null } } }),
  },
  {
    provider: "anthropic",
    make: (entry, opts) => new AnthropicProvider(entry, opts),
    ok: (text) => anthropicTextStream(text),
    stall: (text) => ({ chunks: anthropicSse([messageStart(), ...textBlock(0, text).slice(0, 2)]), hold: true }),
    error: (status, message, headers = {}) => anthropicError(status, status === 401 ? "authentication_error" : "api_error", message, headers),
  },
];

describe.each(formats)("$provider: failures", (format) => {
  const setup = async (extra: Partial<ModelEntry> = {}, opts: TransportOptions = {}) => {
    const server = await fakeServer();
    const retries = instantRetries(opts);
    const provider = format.make(modelEntry(format.provider, server.url, extra), retries);
    return { server, retries, provider, name: provider.name };
  };

  it("401 is model_auth at once: named after the entry, never showing the key", async () => {
    const { server, provider, name, retries } = await setup();
    server.enqueue(format.error(401, `Incorrect API key provided: ${SECRET_KEY}. Find your key at https://example.test`));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_auth");
    expect(error.fault).toBe("model");
    expect(error.message).toBe(`model "${name}": HTTP 401: Incorrect API key provided: ***. Find your key at https://example.test`);
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(SECRET_KEY);
    expect(server.requests).toHaveLength(1);
    expect(retries.sleeps).toEqual([]);
  });

  it.each([
    [400, "model_bad_request"],
    [403, "model_auth"],
    [404, "model_bad_request"],
  ])("%i is not retried (%s)", async (status, code) => {
    const { server, provider } = await setup();
    server.enqueue(format.error(status, "nope"), format.ok("never asked"));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe(code);
    expect(error.providerStatus).toBe(status);
    expect(server.requests).toHaveLength(1);
  });

  it("429 is retried after the retry-after the server asked for", async () => {
    const { server, provider, retries } = await setup();
    server.enqueue(format.error(429, "slow down", { "retry-after": "2" }), format.ok("after waiting"));
    const response = await provider.chat(ask());
    expect(response.text).toBe("after waiting");
    expect(retries.sleeps).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
  });

  it("retry-after-ms wins over retry-after", async () => {
    const { server, provider, retries } = await setup();
    server.enqueue(format.error(429, "slow down", { "retry-after-ms": "150", "retry-after": "1" }), format.ok("ok"));
    await provider.chat(ask());
    expect(retries.sleeps).toEqual([150]);
  });

  it("5xx is retried with growing, jittered backoff, then gives up naming the attempts", async () => {
    const { server, provider, retries, name } = await setup({}, { random: () => 1 });
    server.enqueue(format.error(500, "boom"), format.error(502, "bad gateway"), format.error(503, "overloaded"), format.ok("too late"));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_server");
    expect(error.message).toBe(`model "${name}": HTTP 503: overloaded (after 3 attempts)`);
    expect(server.requests).toHaveLength(3);
    // base 500 ms doubling, with random() = 1 taking the whole jitter range
    expect(retries.sleeps).toEqual([500, 1000]);
  });

  it("a 5xx followed by success answers", async () => {
    const { server, provider, retries } = await setup({}, { random: () => 0 });
    server.enqueue(format.error(529, "overloaded"), format.ok("second time lucky"));
    expect((await provider.chat(ask())).text).toBe("second time lucky");
    expect(retries.sleeps).toEqual([250]);
  });

  it("a retry-after longer than we wait fails at once, saying so", async () => {
    const { server, provider, retries } = await setup();
    server.enqueue(format.error(429, "quota", { "retry-after": "3600" }), format.ok("never"));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_rate_limit");
    expect(error.retryAfterMs).toBe(3_600_000);
    expect(error.message).toContain("the server asked to wait 3600 s, longer than we wait");
    expect(retries.sleeps).toEqual([]);
  });

  it("a connection reset is model_network and retried", async () => {
    const { server, provider, retries } = await setup();
    server.enqueue({ destroy: true }, format.ok("reconnected"));
    expect((await provider.chat(ask())).text).toBe("reconnected");
    expect(retries.sleeps).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it("a connection reset before the answer says the request failed", async () => {
    const { server, provider } = await setup();
    server.setHandler(() => ({ destroy: true }));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_network");
    expect(error.message).toMatch(/the request to http:\/\/127\.0\.0\.1:\d+ failed \(.+\) \(after 3 attempts\)$/);
  });

  it("a connection that drops mid-answer is model_network and not retried (the caller saw a piece)", async () => {
    const { server, provider } = await setup();
    server.enqueue(format.stall("partial"), format.ok("never"));
    const error = await modelFailure(provider.chat(ask(), () => server.dropConnections()));
    expect(error.code).toBe("model_network");
    expect(error.message).toMatch(/the connection to http:\/\/127\.0\.0\.1:\d+ broke before the answer was complete/);
    expect(server.requests).toHaveLength(1);
  });

  it("a server that is not there is model_network naming where it looked", async () => {
    const port = await freePort();
    const retries = instantRetries();
    const provider = format.make(modelEntry(format.provider, `http://127.0.0.1:${port}/v1`), retries);
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_network");
    expect(error.message).toContain(`cannot reach http://127.0.0.1:${port} (ECONNREFUSED`);
    expect(error.message).toContain("(after 3 attempts)");
    expect(retries.sleeps).toHaveLength(2);
  });

  it("no answer within request_timeout is model_timeout (left to fallbacks, not retried)", async () => {
    const timers = new ManualTimers();
    const { server, provider, name } = await setup({ request_timeout: 50 }, { timer: timers.timer });
    server.enqueue({ delayMs: 60_000, ...format.ok("too slow") });
    const failure = modelFailure(provider.chat(ask()));
    // The request is at the server, which does not answer: now the 50 ms run out.
    await eventually(() => expect(server.requests).toHaveLength(1));
    // Both limits run: max_duration (default 10 min) for the whole call, request_timeout for the wait.
    expect(timers.pending().map((t) => t.ms)).toEqual([600_000, 50]);
    timers.fireAll(50);
    const error = await failure;
    expect(error.code).toBe("model_timeout");
    expect(error.message).toMatch(new RegExp(`^model "${name}": no answer from http://127\\.0\\.0\\.1:\\d+ within 50 ms \\(request_timeout\\)`));
    expect(server.requests).toHaveLength(1);
    expect(await within("the connection's close at the server", server.requests[0]!.closed)).toEqual({ complete: false });
  });

  it("a stream that stalls after its first piece times out without a retry (the piece was already shown)", async () => {
    const timers = new ManualTimers();
    const { server, provider } = await setup({ request_timeout: 50 }, { timer: timers.timer });
    server.enqueue(format.stall("partial"), format.ok("never"));
    const seen: string[] = [];
    let shown!: () => void;
    const firstPiece = new Promise<void>((resolve) => (shown = resolve));
    const failure = modelFailure(
      provider.chat(ask(), (d) => {
        if (d.type !== "text") return;
        seen.push(d.text);
        shown();
      }),
    );
    // The piece restarted the timer; nothing comes after it, so that timer runs out.
    await within("the first piece of the stream", firstPiece);
    expect(timers.fireAll(50)).toBe(1);
    const error = await failure;
    expect(error.code).toBe("model_timeout");
    expect(seen).toEqual(["partial"]);
    expect(server.requests).toHaveLength(1);
  });

  it("aborting mid-stream rejects at once and closes the connection", async () => {
    const { server, provider } = await setup();
    server.enqueue(format.stall("first piece"));
    const controller = new AbortController();
    const call = provider.chat(ask(undefined, [], controller.signal), () => controller.abort(new AbortedError("the user pressed stop")));
    await expect(call).rejects.toThrow(new AbortedError("the user pressed stop"));
    expect(await within("the connection's close at the server", server.requests[0]!.closed)).toEqual({ complete: false });
  });

  it("aborting while waiting to retry stops the wait at once", async () => {
    const server = await fakeServer();
    server.enqueue(format.error(429, "wait a minute", { "retry-after": "50" }));
    const controller = new AbortController();
    let waiting!: () => void;
    const started = new Promise<void>((resolve) => (waiting = resolve));
    const provider = format.make(modelEntry(format.provider, server.url), {
      sleep: (ms, signal) => {
        waiting();
        return realSleep(ms, signal);
      },
    });
    const call = provider.chat(ask(undefined, [], controller.signal));
    await within("the wait before the retry to start", started);
    controller.abort(new AbortedError("the gateway is shutting down"));
    await expect(call).rejects.toThrow(new AbortedError("the gateway is shutting down"));
    expect(server.requests).toHaveLength(1);
  });

  it("an already aborted turn sends nothing", async () => {
    const { server, provider } = await setup();
    const controller = new AbortController();
    controller.abort(new AbortedError("gone"));
    await expect(provider.chat(ask(undefined, [], controller.signal))).rejects.toThrow("gone");
    expect(server.requests).toHaveLength(0);
  });

  it("a proxy's HTML 502 page is model_server, retried, and shown shortened", async () => {
    const { server, provider } = await setup();
    const page = `<html><head><title>502 Bad Gateway</title></head><body>${"x".repeat(1000)}</body></html>`;
    server.enqueue(...Array.from({ length: 3 }, () => ({ status: 502, headers: { "content-type": "text/html" }, text: page })));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_server");
    expect(error.message.length).toBeLessThan(400);
    expect(error.message).toContain("HTTP 502: <html><head><title>502 Bad Gateway</title>");
    expect(server.requests).toHaveLength(3);
  });
});

describe("retry decisions", () => {
  it("are bounded and only for rate_limit, server and network", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetries: 2 };
    const half = () => 0.5;
    expect(decideRetry(new ModelError("server", "m", "x"), 0, policy, half)).toEqual({ retry: true, delayMs: 375 });
    expect(decideRetry(new ModelError("network", "m", "x"), 1, policy, half)).toEqual({ retry: true, delayMs: 750 });
    expect(decideRetry(new ModelError("server", "m", "x"), 2, policy, half)).toEqual({ retry: false });
    for (const cls of ["auth", "bad_request", "bad_response", "timeout"] as const) {
      expect(decideRetry(new ModelError(cls, "m", "x"), 0, policy, half)).toEqual({ retry: false });
    }
  });

  it("cap the backoff at maxDelayMs", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetries: 20 };
    expect(decideRetry(new ModelError("server", "m", "x"), 10, policy, () => 1)).toEqual({ retry: true, delayMs: 8000 });
  });
});
