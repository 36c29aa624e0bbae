import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { OpenAIProvider } from "../../src/models/openai.js";
import { type RecordedRequest, type Reply, completionChunk, sseChunks } from "../support/fake-openai.js";
import { SECRET_KEY, ask, fakeServer, modelEntry, modelFailure, weatherTool } from "../support/models.js";
import { harness, jsonOf, openaiConfig } from "../support/project.js";
import { echoTool } from "../support/tools.js";

const stop = completionChunk({}, { finish: "stop" });

/** A streamed answer that reasons (in `field`), then calls `echo`. */
function reasonedCall(field: "reasoning_content" | "reasoning", id: string, ...thoughts: string[]): Reply {
  return {
    chunks: sseChunks([
      ...thoughts.map((t) => completionChunk({ role: "assistant", content: null, [field]: t })),
      completionChunk({ tool_calls: [{ index: 0, id, type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }] }),
      completionChunk({}, { finish: "tool_calls" }),
    ]),
  };
}

const reasonedText = (field: string, thought: string, text: string): Reply => ({
  chunks: sseChunks([completionChunk({ [field]: thought }), completionChunk({ content: text }), stop]),
});

/**
 * DeepSeek's rule in thinking mode: while tool results answer an assistant
 * message, that message must carry its reasoning_content back.
 */
function deepseekCheck(...replies: Reply[]): (request: RecordedRequest) => Reply {
  let next = 0;
  return (request) => {
    const messages: { role: string; reasoning_content?: string; tool_calls?: unknown[] }[] = request.body.messages;
    const lastUser = messages.findLastIndex((m) => m.role === "user");
    const missing = messages.findIndex((m, i) => i > lastUser && m.role === "assistant" && m.tool_calls && typeof m.reasoning_content !== "string");
    if (missing >= 0) {
      return {
        status: 400,
        json: {
          error: { message: `Missing \`reasoning_content\` field in the assistant message at message index ${missing}.`, type: "invalid_request_error" },
        },
      };
    }
    return replies[next++]!;
  };
}

describe("reasoning models over OpenAI-compatible servers: reasoning within a turn", () => {
  it("sends an answer's reasoning_content back with its tool calls, shows it to no one, and keeps none of it", async () => {
    const server = await fakeServer(
      deepseekCheck(
        reasonedCall("reasoning_content", "call_r1", "Echo ", "first."),
        reasonedText("reasoning_content", "Now answer.", "Echoed."),
        reasonedText("reasoning_content", "Again.", "Sure."),
      ),
    );
    const h = harness({ config: openaiConfig(server.url), tools: [echoTool] });
    const res = await h.chat({ message: "echo hi" });
    expect(res.status).toBe(200);
    expect(res.json.delivered).toEqual([
      { from: "echo", text: "echo: hi" },
      { from: "agent", text: "Echoed." },
    ]);
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        reasoning_content: "Echo first.",
        tool_calls: [{ id: "call_r1", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }],
      },
      { role: "tool", tool_call_id: "call_r1", content: "echo: hi" },
    ]);
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:default/history"));
    expect(JSON.stringify(history)).not.toContain("reasoning");
    expect(JSON.stringify(history)).not.toContain("Echo first.");

    // The next turn sends the earlier answers without their reasoning, as DeepSeek asks.
    expect((await h.chat({ message: "again" })).json.reply).toBe("Sure.");
    expect(JSON.stringify(server.requests[2]!.body.messages)).not.toContain("reasoning_content");
  });

  it("a server that wants it refuses the tool round without it (the check the test above passes)", async () => {
    const server = await fakeServer(deepseekCheck());
    const round: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "echo", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ];
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url)).chat(ask(round)));
    expect(error.message).toBe('model "gpt": HTTP 400: Missing `reasoning_content` field in the assistant message at message index 1.');
  });

  it("sends reasoning back in the field it came in (Ollama and OpenRouter say reasoning)", async () => {
    const server = await fakeServer();
    server.enqueue(reasonedCall("reasoning", "call_o1", "Use echo."), { chunks: sseChunks([completionChunk({ content: "ok" }), stop]) });
    const h = harness({ config: openaiConfig(server.url), tools: [echoTool] });
    await h.chat({ message: "echo hi" });
    const answer = server.requests[1]!.body.messages.at(-2);
    expect(answer.reasoning).toBe("Use echo.");
    expect(answer).not.toHaveProperty("reasoning_content");
  });

  it("reads reasoning from a whole answer into the same form", async () => {
    const server = await fakeServer(() => ({
      json: {
        choices: [{ message: { role: "assistant", content: "4°C.", reasoning_content: "Look it up." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 9, completion_tokens: 3 },
      },
    }));
    const response = await new OpenAIProvider(modelEntry("openai", server.url, { stream: false })).chat(ask());
    expect(response.reasoning).toBe("Look it up.");
    expect(response.thinking).toEqual({ format: "openai", field: "reasoning_content", text: "Look it up." });
  });
});

describe("reasoning models over OpenAI-compatible servers: request options", () => {
  const bodyFor = async (extra: Record<string, unknown>) => {
    const server = await fakeServer(() => ({ chunks: sseChunks([completionChunk({ content: "ok" }), stop]) }));
    await new OpenAIProvider(modelEntry("openai", server.url, extra)).chat(ask());
    return server.requests[0]!.body;
  };

  it.each([
    ["o3-mini", "max_completion_tokens"],
    ["o1", "max_completion_tokens"],
    ["gpt-5-mini", "max_completion_tokens"],
    ["gpt-4o-mini", "max_tokens"],
    ["openai/o3", "max_tokens"],
    ["qwen2.5:7b", "max_tokens"],
  ])("sends max_tokens for %s as %s", async (model, field) => {
    const body = await bodyFor({ model, max_tokens: 500 });
    expect(body[field]).toBe(500);
    expect(body).not.toHaveProperty(field === "max_tokens" ? "max_completion_tokens" : "max_tokens");
  });

  it("lets the entry's max_tokens_field decide, either way", async () => {
    expect((await bodyFor({ model: "my-reasoner", max_tokens: 300, max_tokens_field: "max_completion_tokens" })).max_completion_tokens).toBe(300);
    expect((await bodyFor({ model: "o4-mini", max_tokens: 300, max_tokens_field: "max_tokens" })).max_tokens).toBe(300);
  });

  it("passes reasoning_effort through", async () => {
    const body = await bodyFor({ model: "o3-mini", reasoning_effort: "high" });
    expect(body.reasoning_effort).toBe("high");
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("a server that refuses max_tokens answers an error that names the entry option to set", async () => {
    const server = await fakeServer(() => ({
      status: 400,
      json: {
        error: {
          message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          type: "invalid_request_error",
          param: "max_tokens",
          code: "unsupported_parameter",
        },
      },
    }));
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url, { model: "my-reasoner", max_tokens: 100 })).chat(ask()));
    expect(error.code).toBe("model_bad_request");
    expect(error.message).toBe(
      'model "gpt": HTTP 400: Unsupported parameter: \'max_tokens\' is not supported with this model. Use \'max_completion_tokens\' instead. (set "max_tokens_field": "max_completion_tokens" on this model entry)',
    );
  });

  it("a server that refuses max_completion_tokens answers an error that names the other setting", async () => {
    const server = await fakeServer(() => ({ status: 400, json: { error: { message: "Unrecognized request argument supplied: max_completion_tokens" } } }));
    const error = await modelFailure(new OpenAIProvider(modelEntry("openai", server.url, { model: "o1-proxy", max_tokens: 100 })).chat(ask()));
    expect(error.message).toBe(
      'model "gpt": HTTP 400: Unrecognized request argument supplied: max_completion_tokens (set "max_tokens_field": "max_tokens" on this model entry)',
    );
  });
});

describe("OpenAI-compatible usage with cached prompt tokens", () => {
  it("reads prompt_tokens_details.cached_tokens (OpenAI) and prompt_cache_hit_tokens (DeepSeek) as cache reads, counted apart from inputTokens", async () => {
    const usageChunk = (usage: Record<string, unknown>) => ({ ...completionChunk(null), usage });
    const server = await fakeServer();
    server.enqueue(
      {
        chunks: sseChunks([
          completionChunk({ content: "a" }),
          stop,
          usageChunk({ prompt_tokens: 2000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1920 } }),
        ]),
      },
      {
        chunks: sseChunks([
          completionChunk({ content: "b" }),
          stop,
          usageChunk({ prompt_tokens: 900, completion_tokens: 4, prompt_cache_hit_tokens: 640, prompt_cache_miss_tokens: 260 }),
        ]),
      },
    );
    const provider = new OpenAIProvider(modelEntry("openai", server.url));
    expect((await provider.chat(ask())).usage).toEqual({ inputTokens: 80, outputTokens: 5, cacheReadInputTokens: 1920 });
    expect((await provider.chat(ask())).usage).toEqual({ inputTokens: 260, outputTokens: 4, cacheReadInputTokens: 640 });
  });

  it("/v1/chat says the cached tokens apart, and the OpenAI route puts them back inside prompt_tokens with prompt_tokens_details", async () => {
    const usage = { prompt_tokens: 2000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 1920 } };
    const server = await fakeServer(() => ({ chunks: sseChunks([completionChunk({ content: "a" }), stop, { ...completionChunk(null), usage }]) }));
    const h = harness({ config: openaiConfig(server.url) });
    expect((await h.chat({ message: "hi" })).json.usage).toEqual({ input_tokens: 80, output_tokens: 5, cache_read_input_tokens: 1920 });
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }] }),
    });
    expect((await jsonOf(res)).usage).toEqual({
      prompt_tokens: 2000,
      completion_tokens: 5,
      total_tokens: 2005,
      prompt_tokens_details: { cached_tokens: 1920 },
    });
  });
});

describe("OpenAI reasoning models and temperature", () => {
  const temperatureOf = (server: { requests: RecordedRequest[] }) => server.requests.at(-1)!.body.temperature;

  it("no temperature goes to an o-series or gpt-5 model (agents.defaults', the entry's, or a client's), and a start-up warning names the setting once", async () => {
    const server = await fakeServer(() => ({ chunks: sseChunks([completionChunk({ content: "ok" }), stop]) }));
    const config = (model: string, own?: number) => ({
      agents: { defaults: { model_name: "m", temperature: 0.3 } },
      model_list: [
        { model_name: "m", provider: "openai", model, api_base: server.url, api_key: SECRET_KEY, ...(own === undefined ? {} : { temperature: own }) },
      ],
    });
    for (const model of ["o3-mini", "o1", "o4-mini", "gpt-5", "gpt-5-mini"]) {
      const h = harness({ config: config(model) });
      await h.chat({ message: "hi" });
      expect(temperatureOf(server), model).toBeUndefined();
      expect(h.warnings.filter((w) => w.includes("temperature"))).toEqual([
        `agents.defaults.temperature is not sent to model_list[0] ("m"): model "${model}" is an OpenAI reasoning model, which refuses a temperature`,
      ]);
    }
    const own = harness({ config: config("o3", 0.5) });
    await own.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", temperature: 0.9, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(temperatureOf(server)).toBeUndefined();
    expect(own.warnings.filter((w) => w.includes("temperature"))).toEqual([
      'model_list[0].temperature is not sent to model_list[0] ("m"): model "o3" is an OpenAI reasoning model, which refuses a temperature',
    ]);
  });

  it("other models still get it, with no warning", async () => {
    const server = await fakeServer(() => ({ chunks: sseChunks([completionChunk({ content: "ok" }), stop]) }));
    for (const model of ["gpt-4o", "gpt-5-chat-latest", "llama3"]) {
      const h = harness({
        config: {
          agents: { defaults: { model_name: "m", temperature: 0.3 } },
          model_list: [{ model_name: "m", provider: "openai", model, api_base: server.url, api_key: SECRET_KEY }],
        },
      });
      await h.chat({ message: "hi" });
      expect(temperatureOf(server), model).toBe(0.3);
      expect(h.warnings.filter((w) => w.includes("temperature"))).toEqual([]);
    }
  });
});

describe("the openai SDK and our adapter on reasoning models", () => {
  it("read the same reasoning_content and cached tokens from the same whole answer", async () => {
    const server = await fakeServer(() => ({
      json: {
        id: "chatcmpl-r",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "deepseek-reasoner",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "42.", reasoning_content: "Six times seven.", refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42, prompt_tokens_details: { cached_tokens: 16 } },
      },
    }));
    const client = new OpenAI({ baseURL: server.url, apiKey: SECRET_KEY, maxRetries: 0 });
    const sdk = await client.chat.completions.create({ model: "deepseek-reasoner", messages: [{ role: "user", content: "hi" }] });
    const ours = await new OpenAIProvider(modelEntry("openai", server.url, { stream: false })).chat(ask());
    const message = sdk.choices[0]!.message as (typeof sdk.choices)[0]["message"] & { reasoning_content?: string };
    expect(ours.text).toBe(message.content);
    expect(ours.reasoning).toBe(message.reasoning_content);
    expect(ours.usage?.cacheReadInputTokens).toBe(sdk.usage!.prompt_tokens_details!.cached_tokens);
  });

  it("send the same max_completion_tokens and reasoning_effort", async () => {
    const server = await fakeServer(() => ({ chunks: sseChunks([completionChunk({ role: "assistant", content: "ok" }), stop]) }));
    const provider = new OpenAIProvider(modelEntry("openai", server.url, { model: "o3-mini", max_tokens: 700, reasoning_effort: "low" }));
    const client = new OpenAI({ baseURL: server.url, apiKey: SECRET_KEY, maxRetries: 0 });
    await client.chat.completions
      .stream({ model: "o3-mini", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 700, reasoning_effort: "low" })
      .finalChatCompletion();
    await provider.chat(ask([{ role: "user", content: "hi" }], [weatherTool]));
    const [fromSdk, fromUs] = server.requests;
    expect(fromUs!.body.max_completion_tokens).toBe(700);
    expect(fromUs!.body.max_completion_tokens).toBe(fromSdk!.body.max_completion_tokens);
    expect(fromUs!.body.reasoning_effort).toBe(fromSdk!.body.reasoning_effort);
  });
});
