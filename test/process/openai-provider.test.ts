import { describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/models/openai.js";
import { completionChunk, splitBytes, sseChunks, textCompletion, toolCallCompletion } from "../support/fake-openai.js";
import { SECRET_KEY, ask, clockTool, deltaLog, fakeServer, instantRetries, modelEntry, modelFailure, toolRound, weatherTool } from "../support/models.js";

const textChunk = (content: string) => completionChunk({ content });
const stop = completionChunk({}, { finish: "stop" });
const usage = completionChunk(null, { usage: { prompt_tokens: 11, completion_tokens: 3 } });

describe("openai: the request on the wire", () => {
  it("posts the conversation, tools and entry settings to {api_base}/chat/completions", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("ok"), stop]) });
    const provider = new OpenAIProvider(
      modelEntry("openai", `${server.url}/`, {
        max_tokens: 256,
        temperature: 0.3,
        custom_headers: { "X-Title": "picoclaw-test", "HTTP-Referer": "https://example.test" },
        extra_body: { temperature: 0.1, top_p: 0.9, options: { num_ctx: 8192 } },
      }),
    );
    await provider.chat(ask(toolRound(), [clockTool, weatherTool]));

    const [request] = server.requests;
    expect(request!.method).toBe("POST");
    expect(request!.path).toBe("/v1/chat/completions");
    expect(request!.headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers.accept).toBe("text/event-stream");
    expect(request!.headers["x-title"]).toBe("picoclaw-test");
    expect(request!.headers["http-referer"]).toBe("https://example.test");
    expect(request!.body).toEqual({
      model: "fake-model",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Weather in Oslo and the time?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
            { id: "call_b", type: "function", function: { name: "clock", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_a", content: "4°C, rain" },
        { role: "tool", tool_call_id: "call_b", content: "clock is broken" },
      ],
      tools: [
        { type: "function", function: { name: "clock", description: "The time now.", parameters: clockTool.parameters } },
        { type: "function", function: { name: "weather", description: "Current weather of a city.", parameters: weatherTool.parameters } },
      ],
      max_tokens: 256,
      temperature: 0.1,
      top_p: 0.9,
      options: { num_ctx: 8192 },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("sends no Authorization header and no tools key when there is no key and no tool (local servers)", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("ok"), stop]) });
    await new OpenAIProvider(modelEntry("openai", server.url, { api_key: undefined })).chat(ask());
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.requests[0]!.body).not.toHaveProperty("tools");
  });

  it("lets custom_headers replace a header and extra_body remove a field with null", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("ok"), stop]) });
    const entry = modelEntry("openai", server.url, {
      custom_headers: { Authorization: "Bearer other-token-456" },
      extra_body: { stream_options: null },
    });
    await new OpenAIProvider(entry).chat(ask());
    expect(server.requests[0]!.headers.authorization).toBe("Bearer other-token-456");
    expect(server.requests[0]!.body).not.toHaveProperty("stream_options");
    expect(server.requests[0]!.body.stream).toBe(true);
  });
});

describe("openai: streamed answers", () => {
  it("hands each text delta on as it arrives and joins them into the reply", async () => {
    const server = await fakeServer();
    let firstSeen!: () => void;
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    // The second chunk is only written after the caller saw the first one.
    server.enqueue({
      chunks: sseChunks([completionChunk({ role: "assistant", content: "" }), textChunk("Hel"), textChunk("lo!"), stop, usage]),
      beforeChunk: (i) => (i === 2 ? seen : undefined),
    });
    const { deltas, onDelta } = deltaLog();
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask(), (delta) => {
      onDelta(delta);
      firstSeen();
    });
    expect(deltas).toEqual([
      { type: "text", text: "Hel" },
      { type: "text", text: "lo!" },
    ]);
    expect(response).toEqual({
      text: "Hello!",
      toolCalls: [],
      usage: { inputTokens: 11, outputTokens: 3 },
      finishReason: "stop",
      modelName: "gpt",
    });
  });

  it("joins tool-call pieces by index, even when two calls interleave", async () => {
    const server = await fakeServer();
    const call = (index: number, fields: Record<string, unknown>) => completionChunk({ tool_calls: [{ index, ...fields }] });
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ role: "assistant", content: null }),
        call(0, { id: "call_w", type: "function", function: { name: "weather", arguments: "" } }),
        call(0, { function: { arguments: '{"ci' } }),
        call(1, { id: "call_c", type: "function", function: { name: "clock", arguments: "{" } }),
        call(0, { function: { arguments: 'ty":"Oslo"}' } }),
        call(1, { function: { arguments: "}" } }),
        completionChunk({}, { finish: "tool_calls" }),
        usage,
      ]),
    });
    const { deltas, onDelta } = deltaLog();
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask(), onDelta);
    expect(response.toolCalls).toEqual([
      { id: "call_w", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
      { id: "call_c", type: "function", function: { name: "clock", arguments: "{}" } },
    ]);
    expect(response.text).toBeNull();
    expect(response.finishReason).toBe("tool_calls");
    expect(deltas[0]).toEqual({ type: "tool_call", index: 0, id: "call_w", name: "weather" });
    expect(
      deltas
        .filter((d) => d.type === "tool_call" && d.index === 0)
        .map((d) => (d as { arguments?: string }).arguments ?? "")
        .join(""),
    ).toBe('{"city":"Oslo"}');
  });

  it("takes a whole tool call sent in one chunk", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk(
          { role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } }] },
          { finish: "tool_calls" },
        ),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls).toEqual([{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } }]);
  });

  it("makes an id for a tool call without one, and tells calls without index apart by name", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ tool_calls: [{ function: { name: "weather", arguments: '{"city":' } }] }),
        completionChunk({ tool_calls: [{ function: { arguments: '"Oslo"}' } }] }),
        completionChunk({ tool_calls: [{ id: "call_given", function: { name: "clock", arguments: "{}" } }] }),
        completionChunk({}, { finish: "tool_calls" }),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls).toHaveLength(2);
    expect(response.toolCalls[0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(response.toolCalls[0]!.function).toEqual({ name: "weather", arguments: '{"city":"Oslo"}' });
    expect(response.toolCalls[1]).toEqual({ id: "call_given", type: "function", function: { name: "clock", arguments: "{}" } });
  });

  it("keeps two calls apart when a server numbers every call index 0", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "clock", arguments: "{}" } }] }),
        completionChunk({ tool_calls: [{ index: 0, id: "call_y", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] }),
        completionChunk({}, { finish: "tool_calls" }),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ["call_x", "clock", "{}"],
      ["call_y", "weather", '{"city":"Oslo"}'],
    ]);
  });

  it("keeps calls apart at one index without ids: a new name starts a new call, a repeated name only once the call is whole", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ tool_calls: [{ index: 0, function: { name: "a", arguments: '{"x":1}' } }] }),
        completionChunk({ tool_calls: [{ index: 0, function: { name: "b", arguments: '{"y":' } }] }),
        completionChunk({ tool_calls: [{ index: 0, function: { name: "b", arguments: "2}" } }] }),
        completionChunk({ tool_calls: [{ index: 0, function: { name: "b", arguments: "{}" } }] }),
        completionChunk({}, { finish: "tool_calls" }),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([
      ["a", '{"x":1}'],
      ["b", '{"y":2}'],
      ["b", "{}"],
    ]);
  });

  it('accepts arguments that are already an object, and turns "" into {}', async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ tool_calls: [{ index: 0, id: "call_o", function: { name: "weather", arguments: { city: "Lima" } } }] }),
        completionChunk({ tool_calls: [{ index: 1, id: "call_e", function: { name: "clock", arguments: "" } }] }),
        completionChunk({}, { finish: "tool_calls" }),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls.map((c) => c.function.arguments)).toEqual(['{"city":"Lima"}', "{}"]);
  });

  it('returns the tool calls although finish_reason says "stop"', async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ content: "", tool_calls: [{ index: 0, id: "call_s", function: { name: "clock", arguments: "{}" } }] }),
        completionChunk({}, { finish: "stop" }),
      ]),
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.toolCalls.map((c) => c.function.name)).toEqual(["clock"]);
    expect(response.finishReason).toBe("tool_calls");
    expect(response.text).toBeNull();
  });

  it('treats content "" and null alike: no text pieces, the reply is the real text', async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([completionChunk({ role: "assistant", content: null }), completionChunk({ content: "" }), textChunk("Hi"), stop]),
    });
    const { deltas, onDelta } = deltaLog();
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask(), onDelta);
    expect(response.text).toBe("Hi");
    expect(deltas).toEqual([{ type: "text", text: "Hi" }]);
  });

  it("keeps reasoning_content (and Ollama's reasoning) apart from the answer", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: sseChunks([
        completionChunk({ role: "assistant", content: null, reasoning_content: "The user " }),
        completionChunk({ content: null, reasoning_content: "greets me." }),
        completionChunk({ content: "", reasoning: " Answer kindly." }),
        textChunk("Hello there."),
        stop,
      ]),
    });
    const { deltas, onDelta } = deltaLog();
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask(), onDelta);
    expect(response.text).toBe("Hello there.");
    expect(response.reasoning).toBe("The user greets me. Answer kindly.");
    expect(deltas.map((d) => d.type)).toEqual(["reasoning", "reasoning", "reasoning", "text"]);
  });

  it("answers without usage when the server sends none", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("no usage here"), stop]) });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.text).toBe("no usage here");
    expect(response).not.toHaveProperty("usage");
  });

  it("joins an event cut in the middle of a JSON value across chunks", async () => {
    const server = await fakeServer();
    const stream = sseChunks([
      textChunk("split "),
      completionChunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] }),
      stop,
    ]).join("");
    const cut = [stream.indexOf('"spl') + 3, stream.indexOf("weather") + 4, stream.indexOf('"city') + 2, stream.length - 3];
    server.enqueue({ chunks: splitBytes(stream, ...cut), chunkDelayMs: 2 });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.text).toBe("split ");
    expect(response.toolCalls[0]!.function).toEqual({ name: "weather", arguments: '{"city":"Oslo"}' });
  });

  it("keeps a multi-byte character whole when a chunk ends in the middle of it", async () => {
    const server = await fakeServer();
    const stream = sseChunks([textChunk("Grüße 🦀 ok"), stop]).join("");
    const bytes = Buffer.from(stream);
    const crab = bytes.indexOf(Buffer.from("🦀"));
    const umlaut = bytes.indexOf(Buffer.from("ü"));
    server.enqueue({ chunks: splitBytes(stream, umlaut + 1, crab + 1, crab + 3), chunkDelayMs: 2 });
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(response.text).toBe("Grüße 🦀 ok");
  });

  it("keeps a multi-byte character whole at every possible cut (in-memory body)", async () => {
    const stream = Buffer.from(sseChunks([textChunk("é🦀"), stop]).join(""));
    for (let cut = 1; cut < stream.length; cut++) {
      const fetchSplit: typeof fetch = async () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(stream.subarray(0, cut));
              controller.enqueue(stream.subarray(cut));
              controller.close();
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        );
      const response = await new OpenAIProvider(modelEntry("openai", "http://127.0.0.1:9/v1"), { fetch: fetchSplit }).chat(ask());
      expect(response.text, `cut at byte ${cut}`).toBe("é🦀");
    }
  });

  it("accepts a stream that ends after finish_reason without [DONE]", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("done anyway"), stop], { done: false }) });
    expect((await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask())).text).toBe("done anyway");
  });
});

describe("openai: whole (non-streamed) answers", () => {
  it('with "stream": false asks for one JSON answer and reads it through the same path', async () => {
    const server = await fakeServer();
    server.enqueue(toolCallCompletion([{ name: "weather", args: { city: "Oslo" }, id: "call_9" }], "Let me look."));
    const { deltas, onDelta } = deltaLog();
    const response = await new OpenAIProvider(modelEntry("openai", server.url, { stream: false })).chat(
      ask([{ role: "user", content: "hi" }], [weatherTool]),
      onDelta,
    );
    const body = server.requests[0]!.body;
    expect(body).not.toHaveProperty("stream");
    expect(body).not.toHaveProperty("stream_options");
    expect(server.requests[0]!.headers.accept).toBe("application/json");
    expect(response).toEqual({
      text: "Let me look.",
      toolCalls: [{ id: "call_9", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      usage: { inputTokens: 10, outputTokens: 5 },
      finishReason: "tool_calls",
      modelName: "gpt",
    });
    expect(deltas).toEqual([
      { type: "text", text: "Let me look." },
      { type: "tool_call", index: 0, id: "call_9", name: "weather", arguments: '{"city":"Oslo"}' },
    ]);
  });

  it("reads a JSON answer from a server that ignores stream: true", async () => {
    const server = await fakeServer();
    server.enqueue(textCompletion("plain JSON"));
    const response = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask());
    expect(server.requests[0]!.body.stream).toBe(true);
    expect(response.text).toBe("plain JSON");
  });

  it("takes reasoning_content and object arguments from a whole message", async () => {
    const server = await fakeServer();
    server.enqueue({
      json: {
        choices: [
          {
            message: {
              role: "assistant",
              content: "",
              reasoning_content: "think",
              tool_calls: [{ type: "function", function: { name: "weather", arguments: { city: "Bergen" } } }],
            },
            finish_reason: "stop",
          },
        ],
      },
    });
    const response = await new OpenAIProvider(modelEntry("openai", server.url, { stream: false })).chat(ask());
    expect(response.reasoning).toBe("think");
    expect(response.text).toBeNull();
    expect(response.toolCalls[0]!.function).toEqual({ name: "weather", arguments: '{"city":"Bergen"}' });
    expect(response.toolCalls[0]!.id).toMatch(/^call_/);
    expect(response).not.toHaveProperty("usage");
  });
});

describe("openai: answers that are not what the format promises", () => {
  it("an HTML page instead of JSON is bad_response, not a crash, and is not retried", async () => {
    const server = await fakeServer();
    server.enqueue({ headers: { "content-type": "text/html" }, text: "<html><body>Welcome to nginx!</body></html>" });
    const retries = instantRetries();
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url), retries).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toMatch(/^model "gpt": the answer is not JSON: "<html><body>Welcome to nginx!/);
    expect(server.requests).toHaveLength(1);
  });

  it("JSON without choices is bad_response naming what is missing", async () => {
    const server = await fakeServer();
    server.enqueue({ json: { object: "list", data: [] } });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url)).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the answer is not in the expected format: choices: required");
  });

  it("a stream event that is not JSON is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: ["data: {not json\n\n"] });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url)).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("a stream event is not JSON");
  });

  it("a stream that stops before any finish_reason or [DONE] is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([textChunk("half an ans")], { done: false }) });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url), instantRetries()).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the stream ended before the answer was complete");
  });

  it("a tool call that never gets a name is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([completionChunk({ tool_calls: [{ index: 0, id: "c", function: { arguments: "{}" } }] }, { finish: "tool_calls" })]) });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url)).chat(ask()));
    expect(error.message).toBe('model "gpt": tool call #1 in the answer has no function name');
  });

  it("an error object inside the stream is classified by its code", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: sseChunks([{ error: { message: "Provider returned error", code: 429 } }], { done: false }) });
    server.enqueue({ chunks: sseChunks([textChunk("second try"), stop]) });
    const retries = instantRetries();
    const response = await new OpenAIProvider(modelEntry("openai", server.url), retries).chat(ask());
    expect(response.text).toBe("second try");
    expect(retries.sleeps).toHaveLength(1);

    server.enqueue({
      chunks: sseChunks([textChunk("partial "), { error: { message: "context length exceeded", type: "invalid_request_error" } }], { done: false }),
    });
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url), retries).chat(ask()));
    expect(error.code).toBe("model_bad_request");
    expect(error.message).toContain("invalid_request_error: context length exceeded");
  });
});
