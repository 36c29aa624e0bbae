import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeModelServer, textCompletion, toolCallCompletion } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness, openaiConfig } from "../support/project.js";
import { testTools } from "../support/tools.js";

const NO_SUBAGENTS = { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } };

let server: FakeModelServer;
beforeAll(async () => {
  server = await FakeModelServer.start();
});
afterAll(() => server.close());

describe("a turn against an OpenAI-compatible server", () => {
  it("sends the exact wire format and returns tool results to the model verbatim", async () => {
    const before = server.requests.length;
    server.enqueue(
      toolCallCompletion([
        { name: "whisper", args: { text: "psst" }, id: "call_A" },
        { name: "echo", args: { text: 7 }, id: "call_B" },
      ]),
      textCompletion("All done."),
    );
    const h = harness({ config: { ...openaiConfig(server.url), tools: { ...NO_SUBAGENTS, ...DEFAULT_TOOLS_OFF } }, tools: testTools });
    const { status, json } = await h.chat({ message: "do it", session: "wire" });
    expect(status).toBe(200);
    expect(json.reply).toBe("All done.");
    expect(json.delivered).toEqual([{ from: "agent", text: "All done." }]);

    const [first, second] = server.requests.slice(before);
    expect(first!.path).toBe("/v1/chat/completions");
    expect(first!.headers.authorization).toBe("Bearer sk-test-secret-key-123");
    expect(first!.body.model).toBe("fake-model");
    expect(first!.body.messages).toEqual([
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "do it" },
    ]);
    expect(first!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["boom", "echo", "wait", "whisper"]);
    expect(first!.body.tools[1]).toEqual({
      type: "function",
      function: {
        name: "echo",
        description: "Repeats the text to the user.",
        parameters: {
          type: "object",
          properties: { text: { type: "string", description: "what to say" } },
          required: ["text"],
          additionalProperties: false,
        },
      },
    });
    expect(second!.body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_A", type: "function", function: { name: "whisper", arguments: '{"text":"psst"}' } },
          { id: "call_B", type: "function", function: { name: "echo", arguments: '{"text":7}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_A", content: "secret: psst" },
      { role: "tool", tool_call_id: "call_B", content: 'invalid arguments for tool "echo": text: expected string, received integer' },
    ]);
  });

  it("an answer cut off at max_tokens says so", async () => {
    const cut = textCompletion("The first half of");
    (cut.json as { choices: { finish_reason: string }[] }).choices[0]!.finish_reason = "length";
    server.enqueue(cut);
    const { json } = await harness({ config: openaiConfig(server.url) }).chat({ message: "long story please" });
    expect(json.reply).toBe("The first half of\n\n[The answer was cut off: the model reached its output limit (max_tokens).]");
  });

  it("a failed model call answers 502 model_<class> naming the entry, never the key", async () => {
    server.enqueue({ status: 401, json: { error: { message: "Incorrect API key provided: sk-test-secret-key-123", type: "invalid_request_error" } } });
    const h = harness({ config: openaiConfig(server.url) });
    const { status, json } = await h.chat({ message: "hi" });
    expect(status).toBe(502);
    expect(json.error.code).toBe("model_auth");
    expect(json.error.message).toContain('model "fake"');
    expect(json.error.message).not.toContain("sk-test-secret-key-123");
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("a used model entry whose ${VAR} is unset stops start-up naming the config path and variable; an unused one does not", () => {
    const config = (defaultModel: string) => ({
      agents: { defaults: { model_name: defaultModel } },
      model_list: [
        { model_name: "local", provider: "builtin", model: "scripted" },
        { model_name: "gpt", provider: "openai", model: "m", api_base: server.url, api_key: "${MISSING_KEY}" },
        { model_name: "bad", provider: "openai", model: "m", api_base: "not a url" },
      ],
    });
    expect(() => harness({ config: config("gpt") })).toThrow('model_list[1].api_key: environment variable MISSING_KEY is not set (model "gpt" needs it)');
    expect(() => harness({ config: config("bad") })).toThrow('model_list[2].api_base: not a URL: "not a url"');
    expect(() => harness({ config: config("local"), agents: { main: "m", other: "---\nmodel: gpt\n---\np" } })).toThrow(/MISSING_KEY/);
    expect(harness({ config: config("local") }).runtime.agentIds()).toHaveLength(1);
  });

  it("a used entry whose key or URL cannot go into a request stops start-up, without quoting the secret", () => {
    const start =
      (entry: Record<string, unknown>, env: Record<string, string> = {}) =>
      () =>
        harness({
          env,
          config: { agents: { defaults: { model_name: "gpt" } }, model_list: [{ model_name: "gpt", provider: "openai", model: "m", ...entry }] },
        });
    const problem = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("expected start-up to fail");
    };
    const badKey = problem(start({ api_key: "${KEY}" }, { KEY: "sk-abc\nsecretsecret123" }));
    expect(badKey).toBe("model_list[0].api_key: holds a line break or another character an HTTP header cannot carry (check the variable it comes from)");
    const withPassword = problem(start({ api_base: "http://admin:hunter2pass@127.0.0.1:9/v1" }));
    expect(withPassword).toBe("model_list[0].api_base: must not hold a user name or password; send credentials with api_key or custom_headers");
    const badHeader = problem(start({ custom_headers: { "X-Token": "a\r\nb-secret" } }));
    expect(badHeader).toBe("model_list[0].custom_headers.X-Token: holds a line break or another character an HTTP header cannot carry");
  });
});
