import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { DEFAULT_AGENT, type Harness, type HarnessOptions, harness, jsonOf } from "../support/project.js";
import { testTools } from "../support/tools.js";
import { WireModel, wireConfig } from "../support/wire-model.js";

/**
 * The OpenAI-compatible API with the official `openai` package as the
 * client, as Open WebUI, LibreChat and every SDK user would call it. The
 * SDK's requests go through the gateway app in-process (its `fetch` is the
 * app's), so they cross every check a real request crosses.
 */

/** An SDK client whose requests go to the harness's app. */
function clientOf(h: Harness, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: "http://localhost/v1", apiKey, maxRetries: 0, fetch: (url, init) => h.request(String(url), init) });
}

function gateway(opts: HarnessOptions = {}): { h: Harness; client: OpenAI } {
  const h = harness({ tools: testTools, ...opts });
  return { h, client: clientOf(h, opts.token ?? "no-token-set") };
}

const SCRIPT = ['CALL echo {"text":"hi"}', 'CALL whisper {"text":"psst"}'].join("\n");

describe("the OpenAI-compatible API", () => {
  it("lists one model per agent, its id the agent's id", async () => {
    const { client } = gateway({ agents: { main: DEFAULT_AGENT, helper: DEFAULT_AGENT } });
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models.map((m) => m.id).sort()).toEqual(["helper", "main"]);
    expect(models[0]).toEqual({ id: expect.any(String), object: "model", created: expect.any(Number), owned_by: "picoclaw" });
    expect((await client.models.retrieve("helper")).id).toBe("helper");
  });

  it("answers a completion with what a chat user would see: non-silent tool output, then the answer; never a silent result or tool plumbing", async () => {
    const { client } = gateway();
    const answer = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: SCRIPT }], temperature: 0.2 });
    expect(answer.object).toBe("chat.completion");
    expect(answer.id).toMatch(/^chatcmpl-/);
    expect(answer.model).toBe("main");
    expect(answer.choices).toHaveLength(1);
    const [choice] = answer.choices;
    expect(choice!.finish_reason).toBe("stop");
    expect(choice!.message.role).toBe("assistant");
    expect(choice!.message.tool_calls).toBeUndefined();
    const content = choice!.message.content!;
    expect(content.startsWith("echo: hi\n\nRan 2 tool calls:")).toBe(true);
    expect(content).not.toContain("LEAK");
  });

  it("streams the same content as chat.completion.chunk events: the role first, then pieces as they come, the finish reason, [DONE]", async () => {
    const { client } = gateway();
    const whole = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: SCRIPT }] });
    const stream = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: SCRIPT }], stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0]!.id && c.model === "main")).toBe(true);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.at(-1)!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: "stop" });
    const pieces = chunks.slice(1, -1).map((c) => c.choices[0]!.delta.content);
    // The tool's output, then the built-in model's answer in the paced pieces it streams a watched answer in.
    expect(pieces[0]).toBe("echo: hi");
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.slice(1).join("")).toMatch(/^\n\nRan 2 tool calls:/);
    expect(pieces.join("")).toBe(whole.choices[0]!.message.content);
    expect(chunks.some((c) => "usage" in c)).toBe(false);
  });

  it("reports usage summed over the turn's model calls, in the answer and, asked for, in a last chunk of the stream", async () => {
    const model = new WireModel();
    const { client } = gateway({ config: wireConfig(), models: { fetch: model.fetch } });
    const answering = (async () => {
      const call = await model.call(1);
      call.text("Hello");
      call.finish({ usage: { prompt_tokens: 11, completion_tokens: 2 } });
      const streamed = await model.call(2);
      streamed.text("Hel");
      streamed.text("lo");
      streamed.finish({ usage: { prompt_tokens: 11, completion_tokens: 2 } });
    })();
    const whole = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "hi" }] });
    expect(whole.usage).toEqual({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    const stream = await client.chat.completions.create({
      model: "main",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    await answering;
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Hello");
  });

  it("a stateless conversation: the client's messages are the conversation, its system text after the agent's prompt; nothing of it is kept", async () => {
    const model = new WireModel();
    const { h, client } = gateway({ config: wireConfig({ tools: { todo: { enabled: true }, skills: { enabled: false } } }), models: { fetch: model.fetch } });
    const answering = (async () => {
      const call = await model.call(1);
      call.send({
        id: "x",
        object: "chat.completion.chunk",
        created: 0,
        model: "wire-model",
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: "t1", type: "function", function: { name: "todo", arguments: '{"action":"write","todos":[{"id":"1","content":"a"}]}' } },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      call.finish({ reason: "tool_calls" });
      const second = await model.call(2);
      second.text("Planned.");
      second.finish();
    })();
    const before = h.runtime.stats();
    const answer = await client.chat.completions.create({
      model: "main",
      messages: [
        { role: "system", content: "Answer in French." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Bonjour" },
        { role: "developer", content: [{ type: "text", text: "Be brief." }] },
        { role: "user", content: [{ type: "text", text: "Plan it" }] },
      ],
    });
    await answering;
    expect(answer.choices[0]!.message.content).toBe("Planned.");
    expect(model.calls[0]!.body.messages).toEqual([
      { role: "system", content: "You are a test agent.\n\nAnswer in French.\n\nBe brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Bonjour" },
      { role: "user", content: "Plan it" },
    ]);
    // A one-message conversation cannot spawn: a result could never reach it.
    expect(model.calls[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).not.toContain("spawn");
    await h.runtime.idle();
    expect(h.runtime.sessionKeys()).toEqual([]);
    expect(h.plans.size).toBe(0);
    expect(h.runtime.stats()).toEqual(before);
  });

  it("continues the session an X-Session-Id names, taking only the last user message as the new one", async () => {
    const { h, client } = gateway();
    const headers = { "X-Session-Id": "s1" };
    const first = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "one" }] }, { headers });
    await client.chat.completions.create(
      {
        model: "main",
        messages: [
          { role: "user", content: "one" },
          { role: "assistant", content: first.choices[0]!.message.content },
          { role: "user", content: "two" },
        ],
      },
      { headers },
    );
    const history = await h.runtime.historyOf("agent:main:openai:s1");
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["one", "two"]);
    expect(history).toHaveLength(4);
  });

  it("continues the session the user field names, and /clear there empties it", async () => {
    const { h, client } = gateway();
    await client.chat.completions.create({ model: "main", user: "alice", messages: [{ role: "user", content: "remember me" }] });
    expect(await h.runtime.historyOf("agent:main:openai:alice")).toHaveLength(2);
    const cleared = await client.chat.completions.create({ model: "main", user: "alice", messages: [{ role: "user", content: "/clear" }] });
    expect(cleared.choices[0]!.message.content).toMatch(/^Cleared: this session's history/);
    expect(await h.runtime.historyOf("agent:main:openai:alice")).toEqual([]);
  });

  it("an unknown model is a 404 model_not_found in OpenAI's error shape, the SDK's NotFoundError", async () => {
    const { h, client } = gateway();
    const error = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "model_not_found", type: "invalid_request_error" });
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(await jsonOf(res)).toEqual({
      error: {
        message: 'The model "gpt-4o" does not exist: a model here is an agent id (GET /v1/models lists them)',
        type: "invalid_request_error",
        code: "model_not_found",
      },
    });
  });

  it("errors reach the SDK as its error classes: a wrong key, a failed model call, a model that fails mid-stream", async () => {
    const model = new WireModel();
    // No retries: each failure below is the model's last word.
    const { h, client } = gateway({ config: wireConfig(), models: { fetch: model.fetch, retry: { maxRetries: 0 } }, token: "s3cret" });
    const wrongKey = clientOf(h, "nope");
    await expect(wrongKey.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

    const failing = (async () => {
      (await model.call(1)).send({ error: { message: "upstream died", code: 502 } });
      const streamed = await model.call(2);
      streamed.text("half");
      streamed.send({ error: { message: "upstream died again", code: 502 } });
    })();
    const error = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 502, code: "model_server", type: "server_error" });

    const stream = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "hi" }], stream: true });
    const pieces: string[] = [];
    const iterating = (async () => {
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    })();
    await expect(iterating).rejects.toBeInstanceOf(OpenAI.APIError);
    await expect(iterating).rejects.toMatchObject({ code: "model_server", message: expect.stringContaining("upstream died again") });
    expect(pieces.join("")).toBe("half");
    await failing;
  });

  it("takes images as image_url parts: the new message's and earlier ones', to the agent's model", async () => {
    const model = new WireModel();
    const { client } = gateway({ config: wireConfig(), models: { fetch: model.fetch } });
    const cat = "data:image/png;base64,iVBORw0KGgo=";
    const answering = (async () => {
      const call = await model.call(1);
      call.text("Two cats.");
      call.finish();
    })();
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "user", content: [{ type: "image_url", image_url: { url: cat } }] },
      { role: "assistant", content: "A cat." },
      {
        role: "user",
        content: [
          { type: "text", text: "And this one?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
        ],
      },
    ];
    const answer = await client.chat.completions.create({ model: "main", messages });
    await answering;
    expect(answer.choices[0]!.message.content).toBe("Two cats.");
    // The conversation reaches the model as the client sent it, after the system prompt.
    expect(model.calls[0]!.body.messages.slice(1)).toEqual(messages);
  });

  it("refuses what it cannot honour with a 400 naming it, and runs nothing", async () => {
    const { h, client } = gateway();
    const bad: [Record<string, unknown>, string][] = [
      [{ messages: [{ role: "user", content: "hi" }], n: 2 }, "n:"],
      [
        {
          messages: [
            { role: "tool", tool_call_id: "c", content: "42" },
            { role: "user", content: "hi" },
          ],
        },
        "messages[0]: tool calls and tool results",
      ],
      [
        { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "", format: "wav" } }] }] },
        'messages[0].content[0].type: "input_audio" parts are not taken',
      ],
      [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }] }, "which takes no images"],
      [
        {
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "yes" },
          ],
        },
        "messages[1]: the last message must be the user's",
      ],
      [{ messages: [] }, "messages"],
    ];
    for (const [body, says] of bad) {
      const error = await client.chat.completions.create({ model: "main", ...body } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toContain(says);
    }
    // Streamed, the same refusal is an error status before any chunk.
    const image = [{ type: "image_url" as const, image_url: { url: "https://example.com/cat.png" } }];
    const streamed = await client.chat.completions
      .create({ model: "main", stream: true, messages: [{ role: "user", content: image }] })
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect(streamed).toMatchObject({ status: 400, code: "images_not_supported" });
    const headers = { "X-Session-Id": "no:colons" };
    const badSession = await client.chat.completions
      .create({ model: "main", messages: [{ role: "user", content: "hi" }] }, { headers })
      .catch((e: unknown) => e);
    expect((badSession as Error).message).toContain("X-Session-Id: expected 1-128 characters");
    expect(h.runtime.sessionKeys()).toEqual([]);
  });
});
