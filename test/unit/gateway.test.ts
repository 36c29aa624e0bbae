import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/gateway/app.js";
import { harness, jsonOf } from "../support/project.js";
import { testTools } from "../support/tools.js";

describe("GET /health", () => {
  it("answers ok, never asking for the token", async () => {
    const h = harness({ token: "s3cret" });
    const res = await h.request("/health");
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ status: "ok" });
  });
});

describe("bearer token", () => {
  it("every /v1 route needs it when configured", async () => {
    const h = harness({ config: { gateway: { token: "s3cret" } } });
    for (const [path, init] of [
      ["/v1/agents", {}],
      ["/v1/chat", { method: "POST", body: "{}" }],
      ["/v1/sessions/agent:main:http:default/history", {}],
      ["/v1/nope", {}],
    ] as const) {
      const missing = await h.request(path, init);
      expect(missing.status, path).toBe(401);
      expect(await jsonOf(missing)).toEqual({ error: { code: "unauthorized", message: "missing Authorization: Bearer <token>" } });
      const wrong = await h.request(path, { ...init, headers: { authorization: "Bearer s3cre" } });
      expect(wrong.status).toBe(401);
      expect((await jsonOf(wrong)).error.message).toBe("wrong bearer token");
    }
    const ok = await h.request("/v1/agents", { headers: { authorization: "Bearer s3cret" } });
    expect(ok.status).toBe(200);
  });

  it("is not needed when none is configured", async () => {
    expect((await harness().request("/v1/agents")).status).toBe(200);
  });
});

describe("GET /v1/agents", () => {
  it("lists agents with their effective tools, sorted, and names the one a message without an agent goes to", async () => {
    const h = harness({
      agents: {
        main: "---\nname: Main\ndescription: the main one\n---\nprompt",
        narrow: "---\nname: Narrow\nmodel: other\ntools: [whisper, echo, off, unknown-tool]\n---\nprompt",
        broken: "---\nname: [\n---\nprompt",
      },
      config: {
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          { model_name: "other", provider: "builtin", model: "scripted" },
        ],
      },
      tools: testTools,
    });
    const res = await h.request("/v1/agents");
    expect(await jsonOf(res)).toEqual({
      agents: [
        { id: "broken", name: "broken", description: "", model: "local", provider: "builtin", tools: [] },
        {
          id: "main",
          name: "Main",
          description: "the main one",
          model: "local",
          provider: "builtin",
          tools: [
            "append_file",
            "ask_user",
            "boom",
            "cron",
            "echo",
            "edit_file",
            "exec",
            "list_dir",
            "memory_search",
            "read_file",
            "spawn",
            "subagent",
            "wait",
            "web_fetch",
            "whisper",
            "write_file",
          ],
        },
        { id: "narrow", name: "Narrow", description: "", model: "other", provider: "builtin", tools: ["echo", "whisper"] },
      ],
      default: "main",
    });
    expect(h.warnings.join("\n")).toMatch(/broken.AGENT\.md: frontmatter does not parse/);
    expect(h.warnings.join("\n")).toMatch(/narrow.AGENT\.md: tools lists "unknown-tool", which is not a known tool/);
  });
});

describe("POST /v1/chat", () => {
  it("answers with agent, session_key, reply and delivered", async () => {
    const { status, json } = await harness().chat({ message: "hello" });
    expect(status).toBe(200);
    expect(json.agent).toBe("main");
    expect(json.session_key).toBe("agent:main:http:default");
    expect(json.reply).toMatch(/^You said: hello\n/);
    expect(json.delivered).toEqual([{ from: "agent", text: json.reply }]);
  });

  it("uses the session and agent given", async () => {
    const h = harness({ agents: { main: "m", other: "o" } });
    const { json } = await h.chat({ message: "hi", session: "user-42", agent: "other" });
    expect(json.session_key).toBe("agent:other:http:user-42");
    expect(json.agent).toBe("other");
  });

  it.each([
    ["malformed JSON", '{"message": "hi"', 400, "invalid_json"],
    ["an empty body", "", 400, "invalid_json"],
    ["a missing message", { session: "s" }, 400, "invalid_request"],
    ["a non-string message", { message: 42 }, 400, "invalid_request"],
    ["a JSON array", [1], 400, "invalid_request"],
    ["a session with a colon", { message: "hi", session: "a:subagent:b" }, 400, "invalid_request"],
    ["an unknown agent", { message: "hi", agent: "ghost" }, 404, "agent_not_found"],
  ])("%s gets a JSON %i", async (_case, body, status, code) => {
    const h = harness();
    const res = await h.chat(body);
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    expect(typeof res.json.error.message).toBe("string");
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("names the bad field", async () => {
    expect((await harness().chat({ message: 42 })).json.error.message).toBe("message: expected string, received integer");
    expect((await harness().chat({})).json.error.message).toBe("message: required (expected string)");
  });

  it("refuses a body over 1 MiB with 413", async () => {
    const h = harness();
    const res = await h.chat({ message: "x".repeat(MAX_BODY_BYTES) });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe("payload_too_large");
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("accepts a body just under 1 MiB", async () => {
    const res = await harness().chat({ message: "x".repeat(MAX_BODY_BYTES - 100) });
    expect(res.status).toBe(200);
  });

  it("unknown routes are JSON 404s", async () => {
    const res = await harness().request("/v1/nothing");
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ error: { code: "not_found", message: "no route for GET /v1/nothing" } });
  });
});

describe("tools through the gateway (builtin scripted model)", () => {
  it("runs CALL lines one per round and delivers only non-silent tool output", async () => {
    const h = harness({ tools: testTools });
    const { json } = await h.chat({ message: 'CALL echo {"text":"one"}\nCALL whisper {"text":"two"}' });
    expect(json.delivered).toEqual([
      { from: "echo", text: "echo: one" },
      { from: "agent", text: json.reply },
    ]);
    expect(json.reply).toBe("Ran 2 tool calls:\n1. echo: echo: one\n2. whisper: secret: two");
    expect(JSON.stringify(json.delivered)).not.toContain("LEAK");
  });

  it("bad calls become error results and the turn goes on", async () => {
    const h = harness({ tools: testTools, agents: { main: "---\ntools: [echo, boom]\n---\np" } });
    const { status, json } = await h.chat({
      message: 'CALL boom\nCALL echo {bad json}\nCALL whisper {"text":"x"}\nCALL echo {"text": 1}\nCALL echo {"text":"ok"}',
    });
    expect(status).toBe(200);
    expect(json.reply.split("\n")).toEqual([
      "Ran 5 tool calls:",
      '1. boom (error): tool "boom" failed: kaboom',
      expect.stringMatching(/^2\. echo \(error\): invalid arguments for tool "echo": not valid JSON/),
      '3. whisper (error): tool "whisper" is not available to this agent; available tools: boom, echo',
      '4. echo (error): invalid arguments for tool "echo": text: expected string, received integer',
      "5. echo: echo: ok",
    ]);
  });

  it("stops at max_tool_iterations with a clear final reply", async () => {
    const h = harness({ tools: testTools, config: { agents: { defaults: { max_tool_iterations: 2 } } } });
    const { json } = await h.chat({ message: 'CALL echo {"text":"1"}\nCALL echo {"text":"2"}\nCALL echo {"text":"3"}' });
    expect(json.reply).toMatch(/reached the limit of 2 tool iterations \(agents\.defaults\.max_tool_iterations\)/);
    expect(json.delivered.map((d: { from: string }) => d.from)).toEqual(["echo", "echo", "agent"]);
    const history = await h.runtime.historyOf(json.session_key);
    expect(history.at(-1)).toEqual({ role: "assistant", content: json.reply });
  });
});

describe("history and slash commands", () => {
  it("GET history returns the conversation in OpenAI roles", async () => {
    const h = harness({ tools: testTools });
    await h.chat({ message: 'CALL echo {"text":"a"}', session: "s1" });
    const res = await h.request("/v1/sessions/agent:main:http:s1/history");
    const { messages } = await jsonOf(res);
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(messages[1].tool_calls[0]).toMatchObject({ type: "function", function: { name: "echo", arguments: '{"text":"a"}' } });
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: messages[1].tool_calls[0].id, content: "echo: a", shown: "echo: a" });
    const encoded = await h.request(`/v1/sessions/${encodeURIComponent("agent:main:http:s1")}/history`);
    expect((await jsonOf(encoded)).messages).toHaveLength(4);
  });

  it("history of an unknown session is empty; a malformed key is 400", async () => {
    const h = harness();
    expect(await jsonOf(await h.request("/v1/sessions/agent:main:http:nobody/history"))).toEqual({ messages: [], total: 0 });
    const bad = await h.request("/v1/sessions/not-a-key/history");
    expect(bad.status).toBe(400);
    expect((await jsonOf(bad)).error.code).toBe("invalid_session_key");
  });

  it("every session route answers 404 agent_not_found for a well-formed key whose agent does not exist", async () => {
    const h = harness();
    for (const route of ["history", "events", "todos"]) {
      const res = await h.request(`/v1/sessions/agent:ghost:http:s/${route}`);
      expect(res.status, route).toBe(404);
      expect((await jsonOf(res)).error, route).toEqual({ code: "agent_not_found", message: 'unknown agent "ghost"' });
    }
  });

  it("/clear empties the session's history and never reaches the model", async () => {
    const h = harness();
    await h.chat({ message: "one", session: "a" });
    await h.chat({ message: "two", session: "b" });
    const { json } = await h.chat({ message: "/clear", session: "a" });
    expect(json.delivered).toEqual([{ from: "command", text: json.reply }]);
    expect(json.reply).toMatch(/^Cleared/);
    expect(await h.runtime.historyOf("agent:main:http:a")).toEqual([]);
    expect(await h.runtime.historyOf("agent:main:http:b")).toHaveLength(2);
  });

  it("/new does what /clear does, by the name chat apps use for starting afresh", async () => {
    const h = harness();
    await h.chat({ message: "one", session: "a" });
    const { json } = await h.chat({ message: "/new", session: "a" });
    expect(json.reply).toMatch(/^Cleared/);
    expect(await h.runtime.historyOf("agent:main:http:a")).toEqual([]);
    expect((await h.chat({ message: "/help" })).json.reply).toContain("/new — start a new conversation: the same as /clear");
  });

  it("/help lists the commands; unknown /words go to the model", async () => {
    const h = harness();
    const help = await h.chat({ message: "/help" });
    expect(help.json.reply).toContain("/clear");
    expect(help.json.reply).toContain("/help");
    const other = await h.chat({ message: "/weather today" });
    expect(other.json.reply).toMatch(/^You said: \/weather today/);
    expect(await h.runtime.historyOf("agent:main:http:default")).toHaveLength(2);
  });
});
