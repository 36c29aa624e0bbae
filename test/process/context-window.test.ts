import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OpenAIProvider } from "../../src/models/openai.js";
import { SUMMARY_MARK } from "../../src/runtime/context/summary.js";
import { anthropicError, anthropicMessage } from "../support/fake-anthropic.js";
import { type FakeModelServer, type RecordedRequest, type Reply, fakeModelServers, textCompletion } from "../support/fake-openai.js";
import { ask, modelEntry } from "../support/models.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf, openaiConfig } from "../support/project.js";

/**
 * Conversations longer than the model's context window keep answering
 * (README, "Context that fits"), against real local servers speaking the
 * OpenAI and Anthropic wire formats that refuse requests above a size, as
 * real ones do.
 */

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type Wire = any;

/** What a fake server counts as a request's tokens: a token every 4 characters of its messages' text and its tools. */
function tokensOf(body: Wire): number {
  let chars = JSON.stringify(body.tools ?? []).length + (typeof body.system === "string" ? body.system.length : 0);
  for (const message of body.messages as Wire[]) {
    if (typeof message.content === "string") chars += message.content.length;
    else for (const part of message.content ?? []) chars += JSON.stringify(part).length;
    for (const call of message.tool_calls ?? []) chars += call.function.arguments.length + call.function.name.length;
  }
  return Math.ceil(chars / 4);
}

/** An OpenAI-compatible model with a window of `limit` tokens: above it, OpenAI's own 400; below, an answer with its usage. */
function openaiWithWindow(limit: number, answer: (request: RecordedRequest) => Reply = () => textCompletion("ok")) {
  return (request: RecordedRequest): Reply => {
    const tokens = tokensOf(request.body);
    if (tokens > limit) {
      return {
        status: 400,
        json: {
          error: {
            message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
      };
    }
    const reply = answer(request);
    return { ...reply, json: { ...(reply.json as object), usage: { prompt_tokens: tokens, completion_tokens: 2, total_tokens: tokens + 2 } } };
  };
}

const serve = fakeModelServers();

const words = (n: number) => `${"lorem ipsum ".repeat(Math.ceil(n / 12))}`.slice(0, n);
const failures = (server: FakeModelServer, limit: number) => server.requests.filter((r) => tokensOf(r.body) > limit).length;
const userTexts = (request: RecordedRequest) => (request.body.messages as Wire[]).filter((m) => m.role === "user").map((m) => String(m.content).slice(0, 8));

async function talk(h: Harness, turns: number, size: number, session = "long"): Promise<number[]> {
  const statuses: number[] = [];
  for (let n = 1; n <= turns; n++) statuses.push((await h.chat({ message: `m${n} ${words(size)}`, session })).status);
  return statuses;
}

describe("a conversation longer than the context window", () => {
  it("keeps answering: each request fits context_window with room for max_tokens, the oldest exchanges left out whole; the history keeps them", async () => {
    const limit = 2_400;
    const server = await serve(openaiWithWindow(limit));
    // The file tools' schemas off: in a window this small they would leave room for one exchange only.
    const h = harness({ config: { ...openaiConfig(server.url, { context_window: 2_048, max_tokens: 256, stream: false }), tools: DEFAULT_TOOLS_OFF } });
    expect(await talk(h, 20, 1_500)).toEqual(Array(20).fill(200));
    expect(failures(server, limit)).toBe(0);
    for (const request of server.requests) {
      const messages = request.body.messages as Wire[];
      expect(messages[0]).toEqual({ role: "system", content: "You are a test agent." });
      expect(messages[1].role).toBe("user");
      // The prompt, the history left and the new message within the window, with 256 tokens left for the answer.
      expect(tokensOf(request.body)).toBeLessThanOrEqual(2_048 - 256);
    }
    const last = server.requests.at(-1)!;
    expect(userTexts(last).at(-1)).toBe("m20 lore");
    expect(userTexts(last).length).toBeGreaterThan(1);
    expect(userTexts(last).length).toBeLessThan(20);
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:long/history"));
    expect(history.total).toBe(40);
  });

  it("when the provider still says the request is too long, the oldest exchanges go and the call is tried once more; later turns fit at once", async () => {
    const limit = 3_000;
    const server = await serve(openaiWithWindow(limit));
    // The window configured is far larger than the model's: only the provider's answer can tell.
    const h = harness({ config: openaiConfig(server.url, { context_window: 1_000_000, stream: false }) });
    expect(await talk(h, 30, 1_200)).toEqual(Array(30).fill(200));
    // One refusal taught the gateway the model's true window and how it counts.
    expect(failures(server, limit)).toBe(1);
    expect(server.requests).toHaveLength(31);
  });

  it("the same with Anthropic's 'prompt is too long'", async () => {
    const limit = 3_000;
    const server = await serve((request) => {
      const tokens = tokensOf(request.body);
      if (tokens > limit) return anthropicError(400, "invalid_request_error", `prompt is too long: ${tokens} tokens > ${limit} maximum`);
      return anthropicMessage([{ type: "text", text: "ok" }]);
    });
    const h = harness({
      config: {
        agents: { defaults: { model_name: "claude" } },
        model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test", stream: false }],
      },
    });
    expect(await talk(h, 20, 1_500)).toEqual(Array(20).fill(200));
    expect(failures(server, limit)).toBe(1);
  });

  it("a message too long on its own fails its turn alone (502 model_bad_request); the next turn succeeds and the history holds no trace of it", async () => {
    const limit = 2_000;
    const server = await serve(openaiWithWindow(limit));
    // A window this small holds the conversation only: without the default tools' descriptions and the skills list.
    const h = harness({ config: { ...openaiConfig(server.url, { stream: false }), tools: DEFAULT_TOOLS_OFF } });
    expect(await talk(h, 2, 100)).toEqual([200, 200]);
    const huge = await h.chat({ message: words(20_000), session: "long" });
    expect(huge.status).toBe(502);
    expect(huge.json.error.code).toBe("model_bad_request");
    expect(huge.json.error.message).toContain("maximum context length is 2000 tokens");
    expect((await h.chat({ message: "short again", session: "long" })).status).toBe(200);
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:long/history"));
    expect(history.messages.filter((m: Wire) => m.role === "user").map((m: Wire) => m.content.slice(0, 5))).toEqual(["m1 lo", "m2 lo", "short"]);
  });

  it("with agents.defaults.summarize, the exchanges left out are replaced by a summary from the agent's model, kept in the session file", async () => {
    const server = await serve(
      openaiWithWindow(100_000, (request) => {
        const system = (request.body.messages as Wire[])[0].content as string;
        return textCompletion(system.startsWith("You summarise") ? `SUMMARY of ${userTexts(request).length} message(s)` : "ok");
      }),
    );
    const h = harness({
      config: {
        ...openaiConfig(server.url, { context_window: 2_048, max_tokens: 256, stream: false }),
        agents: { defaults: { model_name: "fake", summarize: true } },
        // The window is tight: the default tools' descriptions would take the room the summary is measured in.
        tools: DEFAULT_TOOLS_OFF,
      },
    });
    expect(await talk(h, 12, 1_500)).toEqual(Array(12).fill(200));
    const history = (await jsonOf(await h.request("/v1/sessions/agent:main:http:long/history"))).messages as Wire[];
    expect(history[0]).toEqual({ role: "user", content: SUMMARY_MARK });
    expect(history[1]).toEqual({ role: "assistant", content: expect.stringMatching(/^SUMMARY of 1 message\(s\)$/) });
    expect(history.length).toBeLessThan(24);
    expect(history.at(-2).content).toMatch(/^m12 /);
    const file = readFileSync(path.join(h.dir, "sessions", "agent_main_http_long.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(JSON.parse(file[0]!)).toEqual({ role: "user", content: SUMMARY_MARK });
    // The model sees the summary where the old exchanges were.
    const last = server.requests.at(-1)!.body.messages as Wire[];
    expect(last[1]).toEqual({ role: "user", content: SUMMARY_MARK });
  });
});

describe("how providers say a request is too long", () => {
  const overflowOf = async (status: number, json: unknown) => {
    const server = await serve(() => ({ status, json }));
    const provider = new OpenAIProvider(modelEntry("openai", server.url, { stream: false }));
    const error = await provider.chat(ask()).catch((caught: unknown) => caught);
    return { code: (error as { code: string }).code, overflow: (error as { contextOverflow?: unknown }).contextOverflow };
  };

  it("OpenAI's context_length_exceeded, llama.cpp's exceed_context_size_error and a local server's words are recognised, with their numbers; the code stays model_bad_request", async () => {
    expect(
      await overflowOf(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, you requested 131000 tokens (127000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      }),
    ).toEqual({ code: "model_bad_request", overflow: { limitTokens: 128000, promptTokens: 127000 } });
    expect(
      await overflowOf(400, {
        error: {
          code: 400,
          message: "the request exceeds the available context size, try increasing it",
          type: "exceed_context_size_error",
          n_prompt_tokens: 5000,
          n_ctx: 4096,
        },
      }),
    ).toEqual({ code: "model_bad_request", overflow: { limitTokens: 4096, promptTokens: 5000 } });
    expect(
      await overflowOf(400, { error: { message: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length" } }),
    ).toEqual({
      code: "model_bad_request",
      overflow: { limitTokens: 32768, promptTokens: 40000 },
    });
    expect(await overflowOf(400, { error: "context length exceeded" })).toEqual({ code: "model_bad_request", overflow: {} });
  });

  it("other refusals are not taken for one", async () => {
    expect(await overflowOf(400, { error: { message: "The model `gpt-9` does not exist", type: "invalid_request_error", code: "model_not_found" } })).toEqual({
      code: "model_bad_request",
      overflow: undefined,
    });
    expect(await overflowOf(401, { error: { message: "maximum context length is 10 tokens" } })).toEqual({ code: "model_auth", overflow: undefined });
  });
});
