import { describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { toAnthropic } from "../../src/models/anthropic-messages.js";
import {
  anthropicError,
  anthropicMessage,
  anthropicSse,
  anthropicTextStream,
  messageEnd,
  messageStart,
  textBlock,
  toolUseBlock,
} from "../support/fake-anthropic.js";
import { splitBytes } from "../support/fake-openai.js";
import { SECRET_KEY, ask, clockTool, deltaLog, fakeServer, instantRetries, modelEntry, modelFailure, toolRound, weatherTool } from "../support/models.js";

describe("anthropic: the request on the wire", () => {
  it("posts to {api_base}/messages with x-api-key, anthropic-version, top-level system and alternating roles", async () => {
    const server = await fakeServer();
    server.enqueue(anthropicTextStream("ok"));
    const provider = new AnthropicProvider(
      modelEntry("anthropic", server.url, {
        temperature: 0.2,
        custom_headers: { "anthropic-beta": "tools-2024-04-04" },
        extra_body: { top_k: 5, metadata: { user_id: "u1" } },
      }),
    );
    await provider.chat(ask(toolRound(), [clockTool, weatherTool]));

    const [request] = server.requests;
    expect(request!.path).toBe("/v1/messages");
    expect(request!.headers["x-api-key"]).toBe(SECRET_KEY);
    expect(request!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request!.headers["anthropic-beta"]).toBe("tools-2024-04-04");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toEqual({
      model: "claude-fake",
      max_tokens: 4096,
      system: "You are terse.",
      messages: [
        { role: "user", content: "Weather in Oslo and the time?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "call_a", name: "weather", input: { city: "Oslo" } },
            { type: "tool_use", id: "call_b", name: "clock", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_a", content: "4°C, rain" },
            { type: "tool_result", tool_use_id: "call_b", content: "clock is broken", is_error: true },
          ],
        },
      ],
      tools: [
        { name: "clock", description: "The time now.", input_schema: clockTool.parameters },
        { name: "weather", description: "Current weather of a city.", input_schema: weatherTool.parameters },
      ],
      temperature: 0.2,
      stream: true,
      top_k: 5,
      metadata: { user_id: "u1" },
    });
  });

  it("uses the entry's max_tokens, and sends no system or tools when there are none", async () => {
    const server = await fakeServer();
    server.enqueue(anthropicTextStream("ok"));
    await new AnthropicProvider(modelEntry("anthropic", server.url, { max_tokens: 1000 })).chat(ask());
    const body = server.requests[0]!.body;
    expect(body.max_tokens).toBe(1000);
    expect(body).not.toHaveProperty("system");
    expect(body).not.toHaveProperty("tools");
    expect(body.messages).toEqual([{ role: "user", content: "hi" }]);
  });
});

describe("anthropic: turning the conversation into alternating messages", () => {
  it("folds tool results and a following user message into one user message, results first", () => {
    const { messages } = toAnthropic([...toolRound(), { role: "user", content: "and tomorrow?" }]);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_a", content: "4°C, rain" },
      { type: "tool_result", tool_use_id: "call_b", content: "clock is broken", is_error: true },
      { type: "text", text: "and tomorrow?" },
    ]);
  });

  it("joins several system messages, drops empty text and sends unparsable arguments as {}", () => {
    const conversation = toAnthropic([
      { role: "system", content: "One." },
      { role: "system", content: "Two." },
      { role: "user", content: "go" },
      { role: "assistant", content: "  ", tool_calls: [{ id: "t1", type: "function", function: { name: "clock", arguments: "{oops" } }] },
      { role: "tool", tool_call_id: "t1", content: 'invalid arguments for tool "clock"', is_error: true },
      { role: "assistant", content: "" },
      { role: "user", content: "again" },
    ]);
    expect(conversation.system).toBe("One.\n\nTwo.");
    expect(conversation.messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "clock", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: 'invalid arguments for tool "clock"', is_error: true },
          { type: "text", text: "again" },
        ],
      },
    ]);
  });
});

describe("anthropic: streamed answers", () => {
  it("hands text on as it arrives and reads usage from message_start and message_delta", async () => {
    const server = await fakeServer();
    let release!: () => void;
    const firstSeen = new Promise<void>((resolve) => (release = resolve));
    const chunks = anthropicSse([messageStart(25), { type: "ping" }, ...textBlock(0, "Hel", "lo"), ...messageEnd("end_turn", 9)]);
    server.enqueue({ chunks, beforeChunk: (i) => (i === 4 ? firstSeen : undefined) });
    const { deltas, onDelta } = deltaLog();
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask(), (d) => {
      onDelta(d);
      release();
    });
    expect(deltas).toEqual([
      { type: "text", text: "Hel" },
      { type: "text", text: "lo" },
    ]);
    expect(response).toEqual({
      text: "Hello",
      toolCalls: [],
      usage: { inputTokens: 25, outputTokens: 9 },
      finishReason: "stop",
      modelName: "claude",
    });
  });

  it("joins input_json_delta fragments and parses them when the block stops", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: anthropicSse([
        messageStart(),
        ...textBlock(0, "Let me check."),
        ...toolUseBlock(1, "toolu_01", "weather", '{"ci', 'ty": "Os', 'lo"}'),
        ...toolUseBlock(2, "toolu_02", "clock"),
        ...messageEnd("tool_use"),
      ]),
    });
    const { deltas, onDelta } = deltaLog();
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask(), onDelta);
    expect(response.text).toBe("Let me check.");
    expect(response.toolCalls).toEqual([
      { id: "toolu_01", type: "function", function: { name: "weather", arguments: '{"city": "Oslo"}' } },
      { id: "toolu_02", type: "function", function: { name: "clock", arguments: "{}" } },
    ]);
    expect(response.finishReason).toBe("tool_calls");
    expect(deltas.filter((d) => d.type === "tool_call")).toEqual([
      { type: "tool_call", index: 0, id: "toolu_01", name: "weather" },
      { type: "tool_call", index: 0, arguments: '{"ci' },
      { type: "tool_call", index: 0, arguments: 'ty": "Os' },
      { type: "tool_call", index: 0, arguments: 'lo"}' },
      { type: "tool_call", index: 1, id: "toolu_02", name: "clock" },
    ]);
  });

  it("keeps thinking apart from the answer", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: anthropicSse([
        messageStart(),
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Short answer." } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
        { type: "content_block_stop", index: 0 },
        ...textBlock(1, "Yes."),
        ...messageEnd("end_turn"),
      ]),
    });
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask());
    expect(response.reasoning).toBe("Short answer.");
    expect(response.text).toBe("Yes.");
  });

  it("tool input that is not JSON at block stop is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: anthropicSse([messageStart(), ...toolUseBlock(0, "toolu_9", "weather", '{"city": '), ...messageEnd("tool_use")]) });
    const error = await modelFailure(new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toBe('model "claude": the input of tool_use block 0 is not valid JSON: {"city":');
  });

  it("an error event before any text is classified and retried; after text it is not", async () => {
    const server = await fakeServer();
    const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    server.enqueue({ chunks: anthropicSse([overloaded]) }, anthropicTextStream("recovered"));
    const retries = instantRetries();
    const provider = new AnthropicProvider(modelEntry("anthropic", server.url), retries);
    expect((await provider.chat(ask())).text).toBe("recovered");
    expect(retries.sleeps).toHaveLength(1);

    server.enqueue({ chunks: anthropicSse([messageStart(), ...textBlock(0, "part").slice(0, 2), overloaded]) }, anthropicTextStream("never"));
    const error = await modelFailure(provider.chat(ask()));
    expect(error.code).toBe("model_server");
    expect(error.message).toBe('model "claude": the server reported an error: overloaded_error: Overloaded');
    expect(server.requests).toHaveLength(3);
  });

  it("a stream that ends before message_stop is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ chunks: anthropicSse([messageStart(), ...textBlock(0, "cut")]) });
    const error = await modelFailure(new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("no message_stop");
  });

  it("ignores event kinds it does not know", async () => {
    const server = await fakeServer();
    server.enqueue({
      chunks: anthropicSse([messageStart(), { type: "future_event", data: 1 }, ...textBlock(0, "fine"), ...messageEnd("end_turn")]),
    });
    expect((await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask())).text).toBe("fine");
  });

  it("joins events cut in the middle of JSON and of a multi-byte character", async () => {
    const server = await fakeServer();
    const stream = anthropicSse([
      messageStart(),
      ...textBlock(0, "naïve 🦀"),
      ...toolUseBlock(1, "toolu_x", "weather", '{"city":"Zürich"}'),
      ...messageEnd("tool_use"),
    ]).join("");
    const bytes = Buffer.from(stream);
    const cuts = [
      bytes.indexOf(Buffer.from("ï")) + 1,
      bytes.indexOf(Buffer.from("🦀")) + 2,
      bytes.indexOf(Buffer.from("Zür")) + 3,
      bytes.indexOf(Buffer.from("message_stop")) + 4,
    ];
    server.enqueue({ chunks: splitBytes(stream, ...cuts), chunkDelayMs: 2 });
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask());
    expect(response.text).toBe("naïve 🦀");
    expect(response.toolCalls[0]!.function).toEqual({ name: "weather", arguments: '{"city":"Zürich"}' });
  });
});

describe("anthropic: whole (non-streamed) answers", () => {
  it('with "stream": false reads the message through the same path', async () => {
    const server = await fakeServer();
    server.enqueue(
      anthropicMessage(
        [
          { type: "text", text: "On it." },
          { type: "tool_use", id: "toolu_5", name: "weather", input: { city: "Oslo" } },
        ],
        "tool_use",
      ),
    );
    const { deltas, onDelta } = deltaLog();
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url, { stream: false })).chat(ask(), onDelta);
    expect(server.requests[0]!.body).not.toHaveProperty("stream");
    expect(response).toEqual({
      text: "On it.",
      toolCalls: [{ id: "toolu_5", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      usage: { inputTokens: 12, outputTokens: 7 },
      finishReason: "tool_calls",
      modelName: "claude",
    });
    expect(deltas).toEqual([
      { type: "text", text: "On it." },
      { type: "tool_call", index: 0, id: "toolu_5", name: "weather", arguments: '{"city":"Oslo"}' },
    ]);
  });

  it("an error body with status 200 is classified, not taken as an answer", async () => {
    const server = await fakeServer();
    server.enqueue({ json: { type: "error", error: { type: "invalid_request_error", message: "messages: roles must alternate" } } });
    const error = await modelFailure(new AnthropicProvider(modelEntry("anthropic", server.url, { stream: false })).chat(ask()));
    expect(error.code).toBe("model_bad_request");
    expect(error.message).toContain("roles must alternate");
  });

  it("a 401 authentication_error is model_auth without the key", async () => {
    const server = await fakeServer();
    server.enqueue(anthropicError(401, "authentication_error", "invalid x-api-key"));
    const error = await modelFailure(new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask()));
    expect(error.code).toBe("model_auth");
    expect(error.message).toBe('model "claude": HTTP 401: invalid x-api-key');
  });

  it("a message without content is bad_response", async () => {
    const server = await fakeServer();
    server.enqueue({ json: { type: "message", role: "assistant" } });
    const error = await modelFailure(new AnthropicProvider(modelEntry("anthropic", server.url, { stream: false })).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("content: required");
  });
});
