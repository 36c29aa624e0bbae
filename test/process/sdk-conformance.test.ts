import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { toAnthropic } from "../../src/models/anthropic-messages.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import type { ChatMessage, ContentPart } from "../../src/models/message.js";
import {
  anthropicMessage,
  anthropicSse,
  messageEnd,
  messageStart,
  redactedData,
  redactedThinkingBlock,
  signatureOf,
  textBlock,
  thinkingBlock,
  toolUseBlock,
} from "../support/fake-anthropic.js";
import { completionChunk, sseChunks, toolCallCompletion } from "../support/fake-openai.js";
import { SECRET_KEY, ask, fakeServer, modelEntry, toolRound, weatherTool } from "../support/models.js";

/**
 * The official SDKs read the fake servers' answers: proof that the fakes
 * speak the real wire formats, and that our adapters reassemble the same
 * message the SDK does from the very same bytes.
 */

describe("the openai SDK and our adapter read the same stream into the same message", () => {
  const chunks = sseChunks([
    completionChunk({ role: "assistant", content: "" }),
    completionChunk({ content: "Checking " }),
    completionChunk({ content: "both." }),
    completionChunk({ tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "weather", arguments: "" } }] }),
    completionChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    completionChunk({ tool_calls: [{ index: 1, id: "call_c", type: "function", function: { name: "clock", arguments: "{}" } }] }),
    completionChunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
    completionChunk({}, { finish: "tool_calls" }),
    completionChunk(null, { usage: { prompt_tokens: 31, completion_tokens: 17 } }),
  ]);

  it("streamed", async () => {
    const server = await fakeServer(() => ({ chunks }));
    const client = new OpenAI({ baseURL: server.url, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.chat.completions
      .stream({ model: "fake-model", messages: [{ role: "user", content: "hi" }], stream_options: { include_usage: true } })
      .finalChatCompletion();
    const ours = await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask([{ role: "user", content: "hi" }], [weatherTool]));

    const message = sdk.choices[0]!.message;
    expect(ours.text).toBe(message.content);
    expect(ours.toolCalls).toEqual(message.tool_calls);
    expect(ours.finishReason).toBe(sdk.choices[0]!.finish_reason);
    expect(ours.usage).toEqual({ inputTokens: sdk.usage!.prompt_tokens, outputTokens: sdk.usage!.completion_tokens });
    // and both asked the same way
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.path).toBe(fromSdk!.path);
    expect(fromUs!.headers.authorization).toBe(fromSdk!.headers.authorization);
    expect(fromUs!.body.stream).toBe(fromSdk!.body.stream);
    expect(fromUs!.body.stream_options).toEqual(fromSdk!.body.stream_options);
  });

  it("whole", async () => {
    const reply = toolCallCompletion([{ name: "weather", args: { city: "Oslo" }, id: "call_1" }], "One moment.");
    const server = await fakeServer(() => reply);
    const client = new OpenAI({ baseURL: server.url, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] });
    const ours = await new OpenAIProvider(modelEntry("openai", server.url, { stream: false })).chat(ask());
    expect(ours.text).toBe(sdk.choices[0]!.message.content);
    expect(ours.toolCalls).toEqual(sdk.choices[0]!.message.tool_calls);
  });
});

describe("the anthropic SDK and our adapter read the same stream into the same message", () => {
  const chunks = anthropicSse([
    messageStart(40),
    { type: "ping" },
    ...textBlock(0, "Checking ", "the weather."),
    ...toolUseBlock(1, "toolu_01", "weather", "", '{"city": ', '"Oslo", "days": [1, 2]}'),
    ...toolUseBlock(2, "toolu_02", "clock"),
    ...messageEnd("tool_use", 22),
  ]);

  it("streamed", async () => {
    const server = await fakeServer(() => ({ chunks }));
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.messages.stream({ model: "claude-fake", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    const ours = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask());

    const text = sdk.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    const toolUses = sdk.content.flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name, input: b.input }] : []));
    expect(ours.text).toBe(text);
    expect(ours.toolCalls.map((c) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) }))).toEqual(toolUses);
    expect(toolUses).toHaveLength(2);
    expect(ours.usage).toEqual({ inputTokens: sdk.usage.input_tokens, outputTokens: sdk.usage.output_tokens });
    expect(sdk.stop_reason).toBe("tool_use");
    expect(ours.finishReason).toBe("tool_calls");
    // Both asked the same endpoint for a stream. (SDK 1.14 authenticates with a Bearer header and a newer
    // anthropic-version; the issue pins x-api-key and 2023-06-01, which the wire tests check.)
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.path).toBe(fromSdk!.path);
    expect(fromUs!.body.stream).toBe(fromSdk!.body.stream);
  });

  it("whole", async () => {
    const reply = anthropicMessage(
      [
        { type: "text", text: "Sure." },
        { type: "tool_use", id: "toolu_9", name: "weather", input: { city: "Lima" } },
      ],
      "tool_use",
    );
    const server = await fakeServer(() => reply);
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.messages.create({ model: "claude-fake", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    const ours = await new AnthropicProvider(modelEntry("anthropic", server.url, { stream: false })).chat(ask());
    expect(sdk.content[0]).toEqual({ type: "text", text: ours.text });
    expect(sdk.content[1]).toEqual({ type: "tool_use", id: ours.toolCalls[0]!.id, name: "weather", input: JSON.parse(ours.toolCalls[0]!.function.arguments) });
  });

  it("our converted conversation has the SDK's request types (checked by tsc) and the SDK sends it as we do", async () => {
    const converted = toAnthropic(toolRound());
    const messages: Anthropic.MessageParam[] = converted.messages;
    const server = await fakeServer(() => ({ chunks: anthropicSse([messageStart(), ...textBlock(0, "ok"), ...messageEnd("end_turn")]) }));
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    await client.messages.stream({ model: "claude-fake", max_tokens: 4096, system: converted.system!, messages }).finalMessage();
    await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask(toolRound()));
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.body.messages).toEqual(fromSdk!.body.messages);
    expect(fromUs!.body.system).toEqual(fromSdk!.body.system);
  });
});

describe("the SDKs and our adapters on thinking and images", () => {
  it("the anthropic SDK assembles the same thinking, signature and redacted blocks from the same stream", async () => {
    const chunks = anthropicSse([
      messageStart(),
      ...thinkingBlock(0, "First ", "Oslo."),
      ...redactedThinkingBlock(1, "hidden"),
      ...textBlock(2, "Checking."),
      ...toolUseBlock(3, "toolu_1", "weather", '{"city":"Oslo"}'),
      ...messageEnd("tool_use"),
    ]);
    const server = await fakeServer(() => ({ chunks }));
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.messages.stream({ model: "claude-fake", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    const ours = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask());
    const thinking = (ours.thinking?.format === "anthropic" ? ours.thinking.blocks : []).filter((b) => b.type === "thinking" || b.type === "redacted_thinking");
    expect(thinking).toEqual(sdk.content.filter((b) => b.type === "thinking" || b.type === "redacted_thinking"));
    expect(thinking).toHaveLength(2);
  });

  it("our converted conversation with thinking, images and cache breakpoints has the SDK's request types (checked by tsc), and the SDK sends it as we do", async () => {
    const conversation: ChatMessage[] = [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Where is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.from("png").toString("base64")}` } },
          { type: "image_url", image_url: { url: "https://example.test/a.jpg" } },
        ],
      },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
        thinking: {
          format: "anthropic",
          blocks: [
            { type: "thinking", thinking: "Oslo.", signature: signatureOf("Oslo.") },
            { type: "redacted_thinking", data: redactedData("x") },
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "toolu_1" },
          ],
        },
      },
      { role: "tool", tool_call_id: "toolu_1", content: "4°C" },
    ];
    const converted = toAnthropic(conversation, { cache: true });
    const messages: Anthropic.MessageParam[] = converted.messages;
    const system: string | Anthropic.TextBlockParam[] = converted.system!;
    const server = await fakeServer(() => ({ chunks: anthropicSse([messageStart(), ...textBlock(0, "ok"), ...messageEnd("end_turn")]) }));
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    await client.messages.stream({ model: "claude-fake", max_tokens: 4096, system, messages }).finalMessage();
    await new AnthropicProvider(modelEntry("anthropic", server.url, { cache: true })).chat(ask(conversation));
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.body.messages).toEqual(fromSdk!.body.messages);
    expect(fromUs!.body.system).toEqual(fromSdk!.body.system);
  });

  it("the openai SDK sends a message with image_url parts as we do (our parts have the SDK's type, checked by tsc)", async () => {
    const content: ContentPart[] = [
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: "https://example.test/a.jpg", detail: "low" } },
    ];
    const server = await fakeServer(() => ({
      chunks: sseChunks([completionChunk({ role: "assistant", content: "A cat." }), completionChunk({}, { finish: "stop" })]),
    }));
    const client = new OpenAI({ baseURL: server.url, apiKey: SECRET_KEY, maxRetries: 0 });
    await client.chat.completions
      .stream({ model: "fake-model", messages: [{ role: "user", content }], stream_options: { include_usage: true } })
      .finalChatCompletion();
    await new OpenAIProvider(modelEntry("openai", server.url)).chat(ask([{ role: "user", content }]));
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.body.messages).toEqual(fromSdk!.body.messages);
  });
});
