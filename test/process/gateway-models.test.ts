import { describe, expect, it } from "vitest";
import type { RuntimeEvents } from "../../src/port/events.js";
import { anthropicSse, anthropicTextStream, messageEnd, messageStart, toolUseBlock } from "../support/fake-anthropic.js";
import { completionChunk, sseChunks } from "../support/fake-openai.js";
import { SECRET_KEY, fakeServer, instantRetries } from "../support/models.js";
import { harness, openaiConfig } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";
import { echoTool } from "../support/tools.js";

/** The whole gateway in-process (config → runtime → hono app) talking to fake model servers. */

const okStream = (text: string) => ({ chunks: sseChunks([completionChunk({ content: text }), completionChunk({}, { finish: "stop" })]) });

function llmEvents(h: ReturnType<typeof harness>) {
  const requests: RuntimeEvents["llm.request"][] = [];
  const responses: RuntimeEvents["llm.response"][] = [];
  h.runtime.on("llm.request", (e) => requests.push(e));
  h.runtime.on("llm.response", (e) => responses.push(e));
  return { requests, responses };
}

describe("gateway with a real model provider", () => {
  it("a rejected key answers 502 model_auth naming the entry, without the key, and leaves history alone", async () => {
    const server = await fakeServer();
    server.enqueue({ status: 401, json: { error: { message: `Incorrect API key provided: ${SECRET_KEY}`, code: "invalid_api_key" } } });
    const h = harness({ config: openaiConfig(server.url), models: instantRetries() });
    const res = await h.chat({ message: "hello" });
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ error: { code: "model_auth", message: 'model "fake": HTTP 401: Incorrect API key provided: ***' } });
    expect(JSON.stringify(res.json)).not.toContain(SECRET_KEY);
    expect(h.logger.lines.map((l) => l.message).join("\n")).not.toContain(SECRET_KEY);
    const history = await h.request("/v1/sessions/agent:main:http:default/history");
    expect(((await history.json()) as { messages: unknown[] }).messages).toEqual([]);
  });

  it.each([
    ["model_server", { status: 503, json: { error: { message: "overloaded" } } }, 3],
    ["model_bad_response", { status: 200, headers: { "content-type": "text/html" }, text: "<h1>It works!</h1>" }, 1],
    ["model_bad_request", { status: 400, json: { error: { message: "model 'fake-model' not found" } } }, 1],
  ] as const)("a failing model answers 502 %s (after %i request(s))", async (code, reply, count) => {
    const server = await fakeServer(() => reply);
    const h = harness({ config: openaiConfig(server.url), models: instantRetries() });
    const res = await h.chat({ message: "hello" });
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe(code);
    expect(res.json.error.message).toMatch(/^model "fake": /);
    expect(server.requests).toHaveLength(count);
  });

  it("a slow model answers 502 model_timeout", async () => {
    const server = await fakeServer(() => ({ delayMs: 60_000, ...okStream("late") }));
    const timers = new ManualTimers();
    const h = harness({ config: openaiConfig(server.url, { request_timeout: 50 }), models: { timer: timers.timer } });
    const answer = h.chat({ message: "hello" });
    // The model has the request and does not answer: the 50 ms run out.
    await eventually(() => expect(server.requests).toHaveLength(1));
    expect(timers.fireAll(50)).toBe(1);
    const res = await answer;
    expect(res.status).toBe(502);
    expect(res.json.error.code).toBe("model_timeout");
    expect(res.json.error.message).toContain("(request_timeout)");
  });

  it("a fallback answers when the model is down, and the turn's events say which model answered", async () => {
    const primary = await fakeServer(() => ({ status: 503, json: { error: { message: "overloaded" } } }));
    const backup = await fakeServer();
    backup.enqueue(anthropicTextStream("Backup ", "here."));
    const config = openaiConfig(primary.url, { fallbacks: ["backup"] });
    (config.model_list as unknown[]).push({
      model_name: "backup",
      provider: "anthropic",
      model: "claude-fake",
      api_base: backup.url,
      api_key: "sk-ant-test-999",
    });
    // The system prompt is compared whole: without the skills list.
    const h = harness({ config: { ...config, tools: { skills: { enabled: false } } }, models: instantRetries() });
    const events = llmEvents(h);

    const res = await h.chat({ message: "hello" });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe("Backup here.");
    expect(events.requests.map((e) => e.model)).toEqual(["fake"]);
    expect(events.responses.map((e) => e.model)).toEqual(["backup"]);
    expect(backup.requests[0]!.body.system).toBe("You are a test agent.");
  });

  it("runs a streamed tool call round trip against an OpenAI-compatible server", async () => {
    const server = await fakeServer();
    server.enqueue(
      {
        chunks: sseChunks([
          completionChunk({
            role: "assistant",
            content: null,
            tool_calls: [{ index: 0, id: "call_e1", type: "function", function: { name: "echo", arguments: "" } }],
          }),
          completionChunk({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] }),
          completionChunk({ tool_calls: [{ index: 0, function: { arguments: '"hi"}' } }] }),
          completionChunk({}, { finish: "tool_calls" }),
        ]),
      },
      okStream("Echoed."),
    );
    const h = harness({ config: openaiConfig(server.url), tools: [echoTool] });
    const res = await h.chat({ message: "say hi" });
    expect(res.status).toBe(200);
    expect(res.json.delivered).toEqual([
      { from: "echo", text: "echo: hi" },
      { from: "agent", text: "Echoed." },
    ]);
    expect(server.requests[1]!.body.messages.slice(-2)).toEqual([
      { role: "assistant", content: null, tool_calls: [{ id: "call_e1", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }] },
      { role: "tool", tool_call_id: "call_e1", content: "echo: hi" },
    ]);
  });

  it("runs a tool round trip against the Anthropic Messages API, with an error result marked is_error", async () => {
    const server = await fakeServer();
    server.enqueue(
      {
        chunks: anthropicSse([
          messageStart(),
          ...toolUseBlock(0, "toolu_1", "echo", '{"text":', '"one"}'),
          ...toolUseBlock(1, "toolu_2", "echo", '{"wrong":1}'),
          ...messageEnd("tool_use"),
        ]),
      },
      anthropicTextStream("Done."),
    );
    const config = {
      agents: { defaults: { model_name: "claude" } },
      model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test-999" }],
    };
    const h = harness({ config, tools: [echoTool] });
    const res = await h.chat({ message: "echo twice" });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe("Done.");
    const second = server.requests[1]!.body;
    expect(second.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(second.messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "echo: one" },
      { type: "tool_result", tool_use_id: "toolu_2", content: expect.stringContaining('invalid arguments for tool "echo"'), is_error: true },
    ]);
  });
});
