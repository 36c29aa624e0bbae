import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import type { RuntimeEvents } from "../../src/port/events.js";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { type AnthropicEvent, anthropicMessage, anthropicSse, anthropicTextStream, messageStart, textBlock, toolUseBlock } from "../support/fake-anthropic.js";
import { SECRET_KEY, ask, clockTool, fakeServer, modelEntry, toolRound, weatherTool } from "../support/models.js";
import { harness } from "../support/project.js";
import { echoTool } from "../support/tools.js";

const EPHEMERAL = { type: "ephemeral" };

/** message_start and message_delta as the API sends them with prompt caching. */
function cachedUsageStream(...blocks: AnthropicEvent[][]): string[] {
  const start = messageStart(3);
  (start.message as { usage: Record<string, number> }).usage = {
    input_tokens: 3,
    cache_creation_input_tokens: 1800,
    cache_read_input_tokens: 0,
    output_tokens: 1,
  };
  return anthropicSse([
    start,
    ...blocks.flat(),
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { input_tokens: 3, cache_creation_input_tokens: 200, cache_read_input_tokens: 1600, output_tokens: 9 },
    },
    { type: "message_stop" },
  ]);
}

/**
 * Every prefix a request marks for caching (tools, then system, then
 * messages, up to and including each marked block, breakpoints taken out), as
 * the API would look it up: a later request reads back what an earlier one
 * wrote when one of its prefixes equals one of the earlier's.
 */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON
function cachedPrefixes(body: any): string[] {
  const plain = (block: object) => {
    const { cache_control: _, ...rest } = block as { cache_control?: unknown };
    return rest;
  };
  const sequence: { block: object; marked: boolean }[] = [];
  for (const tool of body.tools ?? []) sequence.push({ block: plain(tool), marked: !!tool.cache_control });
  for (const block of Array.isArray(body.system) ? body.system : body.system ? [{ type: "text", text: body.system }] : []) {
    sequence.push({ block: plain(block), marked: !!block.cache_control });
  }
  for (const message of body.messages) {
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    for (const block of blocks) sequence.push({ block: { role: message.role, ...plain(block) }, marked: !!block.cache_control });
  }
  return sequence.flatMap((entry, i) => (entry.marked ? [JSON.stringify(sequence.slice(0, i + 1).map((e) => e.block))] : []));
}

describe("anthropic prompt caching: the request", () => {
  it("with cache on, marks the tool list, the system prompt, the conversation's end and the previous call's end: four breakpoints", async () => {
    const server = await fakeServer(() => anthropicTextStream("ok"));
    await new AnthropicProvider(modelEntry("anthropic", server.url, { cache: true })).chat(ask(toolRound(), [clockTool, weatherTool]));
    const body = server.requests[0]!.body;
    expect(body.tools).toEqual([
      { name: "clock", description: "The time now.", input_schema: clockTool.parameters },
      { name: "weather", description: "Current weather of a city.", input_schema: weatherTool.parameters, cache_control: EPHEMERAL },
    ]);
    expect(body.system).toEqual([{ type: "text", text: "You are terse.", cache_control: EPHEMERAL }]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Oslo and the time?", cache_control: EPHEMERAL }] },
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
          { type: "tool_result", tool_use_id: "call_b", content: "clock is broken", is_error: true, cache_control: EPHEMERAL },
        ],
      },
    ]);
    expect(JSON.stringify(body).split('"cache_control"')).toHaveLength(5);
  });

  it("marks a first message alone (no tools, no system prompt) as a block", async () => {
    const server = await fakeServer(() => anthropicTextStream("ok"));
    await new AnthropicProvider(modelEntry("anthropic", server.url, { cache: true })).chat(ask());
    const body = server.requests[0]!.body;
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi", cache_control: EPHEMERAL }] }]);
    expect(body).not.toHaveProperty("system");
  });

  it("marks nothing without cache", async () => {
    const server = await fakeServer(() => anthropicTextStream("ok"));
    await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask(toolRound(), [weatherTool]));
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain("cache_control");
  });

  it("each call of a turn, and the next turn, reads back a prefix the call before it wrote", async () => {
    const server = await fakeServer();
    server.enqueue(
      { chunks: anthropicSse([messageStart(), ...toolUseBlock(0, "toolu_1", "echo", '{"text":"a"}'), ...messageEndTool()]) },
      { chunks: anthropicSse([messageStart(), ...toolUseBlock(0, "toolu_2", "echo", '{"text":"b"}'), ...messageEndTool()]) },
      anthropicTextStream("Done."),
      anthropicTextStream("Again."),
    );
    const config = {
      agents: { defaults: { model_name: "claude" } },
      model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test-999", cache: true }],
    };
    const h = harness({ config, tools: [echoTool] });
    expect((await h.chat({ message: "echo twice" })).json.reply).toBe("Done.");
    expect((await h.chat({ message: "once more" })).json.reply).toBe("Again.");

    const prefixes = server.requests.map((r) => cachedPrefixes(r.body));
    for (const prefix of prefixes) expect(prefix.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < prefixes.length; i++) {
      const written = new Set(prefixes.slice(0, i).flat());
      // the system prompt and tools always, and the conversation up to where the previous call ended
      expect(prefixes[i]!.filter((p) => written.has(p)).length, `request ${i}`).toBeGreaterThanOrEqual(3);
    }
  });
});

function messageEndTool(): AnthropicEvent[] {
  return [{ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } }, { type: "message_stop" }];
}

describe("anthropic prompt caching: usage", () => {
  it("reads cache_creation_input_tokens and cache_read_input_tokens from a stream, the last report winning", async () => {
    const server = await fakeServer(() => ({ chunks: cachedUsageStream(textBlock(0, "ok")) }));
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url, { cache: true })).chat(ask());
    expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 9, cacheCreationInputTokens: 200, cacheReadInputTokens: 1600 });
  });

  it("reads them from a whole answer", async () => {
    const reply = anthropicMessage([{ type: "text", text: "ok" }]);
    (reply.json as { usage: object }).usage = { input_tokens: 4, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048 };
    const server = await fakeServer(() => reply);
    const response = await new AnthropicProvider(modelEntry("anthropic", server.url, { stream: false })).chat(ask());
    expect(response.usage).toEqual({ inputTokens: 4, outputTokens: 2, cacheCreationInputTokens: 0, cacheReadInputTokens: 2048 });
  });

  it("the llm.response event carries them", async () => {
    const server = await fakeServer(() => ({ chunks: cachedUsageStream(textBlock(0, "ok")) }));
    const config = {
      agents: { defaults: { model_name: "claude" } },
      model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test-999", cache: true }],
    };
    const h = harness({ config });
    const responses: RuntimeEvents["llm.response"][] = [];
    h.runtime.on("llm.response", (e) => responses.push(e));
    await h.chat({ message: "hello" });
    expect(responses.map((r) => r.usage)).toEqual([{ inputTokens: 3, outputTokens: 9, cacheCreationInputTokens: 200, cacheReadInputTokens: 1600 }]);
  });

  it("/v1/chat's usage carries the cache's reads and writes apart, and the OpenAI route counts them inside prompt_tokens", async () => {
    const server = await fakeServer(() => ({ chunks: cachedUsageStream(textBlock(0, "ok")) }));
    const config = {
      agents: { defaults: { model_name: "claude" } },
      model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test-999", cache: true }],
    };
    const h = harness({ config });
    const { json } = await h.chat({ message: "hello" });
    expect(json.usage).toEqual({ input_tokens: 3, output_tokens: 9, cache_read_input_tokens: 1600, cache_creation_input_tokens: 200 });
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hello" }] }),
    });
    const completion = (await res.json()) as { usage: Record<string, unknown> };
    expect(completion.usage).toEqual({ prompt_tokens: 1803, completion_tokens: 9, total_tokens: 1812, prompt_tokens_details: { cached_tokens: 1600 } });
  });

  it("the anthropic SDK reads the same cache counts from the same bytes", async () => {
    const server = await fakeServer(() => ({ chunks: cachedUsageStream(textBlock(0, "ok")) }));
    const client = new Anthropic({ baseURL: server.origin, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.messages.stream({ model: "claude-fake", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    const ours = await new AnthropicProvider(modelEntry("anthropic", server.url)).chat(ask());
    expect(ours.usage).toEqual({
      inputTokens: sdk.usage.input_tokens,
      outputTokens: sdk.usage.output_tokens,
      cacheCreationInputTokens: sdk.usage.cache_creation_input_tokens,
      cacheReadInputTokens: sdk.usage.cache_read_input_tokens,
    });
  });
});
