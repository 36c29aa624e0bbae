import { describe, expect, it } from "vitest";
import { BuiltinModel, parseScript } from "../../src/models/builtin.js";
import type { ChatMessage } from "../../src/models/message.js";
import { systemNote } from "../../src/features/subagents/background.js";

const ask = (messages: ChatMessage[], tools: string[] = []) =>
  new BuiltinModel("local").chat({
    messages,
    tools: tools.map((name) => ({ name, description: "", parameters: { type: "object" } })),
    signal: new AbortController().signal,
  });

describe("the built-in model", () => {
  it("echoes plain messages with a hint, naming the agent's tools", async () => {
    const reply = await ask([{ role: "user", content: "hello" }], ["todo"]);
    expect(reply.text).toMatch(/^You said: hello\n/);
    expect(reply.text).toContain("Tools this agent can use: todo.");
    expect(reply.toolCalls).toEqual([]);
  });

  it("runs CALL lines one per round, then summarises", async () => {
    const user: ChatMessage = { role: "user", content: 'CALL a {"x":1}\nCALL b' };
    const first = await ask([user]);
    expect(first.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([["a", '{"x":1}']]);
    const second = await ask([
      user,
      { role: "assistant", content: null, tool_calls: first.toolCalls },
      { role: "tool", tool_call_id: first.toolCalls[0]!.id, content: "A" },
    ]);
    expect(second.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([["b", "{}"]]);
    const done = await ask([
      user,
      { role: "assistant", content: null, tool_calls: first.toolCalls },
      { role: "tool", tool_call_id: first.toolCalls[0]!.id, content: "A" },
      { role: "assistant", content: null, tool_calls: second.toolCalls },
      { role: "tool", tool_call_id: second.toolCalls[0]!.id, content: "bad", is_error: true },
    ]);
    expect(done.text).toBe("Ran 2 tool calls:\n1. a: A\n2. b (error): bad");
  });

  it("a result that is JSON is summarised as an indented json code block, so it reads as data", async () => {
    const user: ChatMessage = { role: "user", content: "CALL todo" };
    const first = await ask([user]);
    const done = await ask([
      user,
      { role: "assistant", content: null, tool_calls: first.toolCalls },
      { role: "tool", tool_call_id: first.toolCalls[0]!.id, content: '{"todos":[{"content":"**milk**"}]}' },
    ]);
    expect(done.text).toBe(
      [
        "Ran 1 tool call:",
        "1. todo:",
        "   ```json",
        "   {",
        '     "todos": [',
        "       {",
        '         "content": "**milk**"',
        "       }",
        "     ]",
        "   }",
        "   ```",
      ].join("\n"),
    );
  });

  it("hands a watched answer over in pieces (paced, at word ends) that join to the answer; an unwatched one in one piece", async () => {
    const pauses: number[] = [];
    const model = new BuiltinModel("local", async (ms) => {
      pauses.push(ms);
    });
    const request = {
      messages: [{ role: "user", content: "a fairly long message to echo back in pieces" }] as ChatMessage[],
      tools: [],
      signal: new AbortController().signal,
    };
    const watched: string[] = [];
    const answer = await model.chat({ ...request, watched: true }, (d) => d.type === "text" && watched.push(d.text));
    expect(watched.length).toBeGreaterThan(5);
    expect(watched.length).toBeLessThanOrEqual(24);
    expect(watched.join("")).toBe(answer.text);
    expect(watched.slice(0, -1).every((piece) => /\s$/.test(piece))).toBe(true);
    expect(pauses).toHaveLength(watched.length - 1);
    const whole: string[] = [];
    await model.chat(request, (d) => d.type === "text" && whole.push(d.text));
    expect(whole).toEqual([answer.text]);
  });

  it("a watched answer stopped between pieces ends there, aborted", async () => {
    const controller = new AbortController();
    const model = new BuiltinModel("local", async () => controller.abort(new Error("stopped")));
    const seen: string[] = [];
    await expect(
      model.chat(
        { messages: [{ role: "user", content: "hello there" }], tools: [], signal: controller.signal, watched: true },
        (d) => d.type === "text" && seen.push(d.text),
      ),
    ).rejects.toThrow("stopped");
    expect(seen).toHaveLength(1);
  });

  it("echoes a subagent's task without the gateway's context line", async () => {
    const reply = await ask([{ role: "user", content: '[A task from agent "main". Your final answer goes back to it, not to the user.]\n\nsummarise this' }]);
    expect(reply.text).toMatch(/^You said: summarise this\n/);
  });

  it("a script is only CALL lines; bracketed notes around it are skipped", () => {
    expect(parseScript("CALL a\nhello")).toBeNull();
    expect(parseScript('[A task from agent "main".]\n\nCALL a {}')).toEqual([{ tool: "a", args: "{}" }]);
  });

  it("passes a system note on without the gateway's bracketed lines", async () => {
    const reply = await ask([
      { role: "user", content: '[System note: background subagent "bg" (id x1, agent main) finished. Its result:]\n\nthe answer\n\n[Tell the user.]' },
    ]);
    expect(reply.text).toBe("Background work finished:\n\nthe answer");
    const failed = await ask([
      {
        role: "user",
        content: systemNote({ id: "x1", childKey: "k", agentId: "main", label: "bg", outcome: "timeout", error: "timed out after 5 ms", durationMs: 5 }),
      },
    ]);
    expect(failed.text).toBe("Background work did not finish:\n\nOutcome: timeout: timed out after 5 ms");
  });

  it("suggests a script that works with the tools the agent has", async () => {
    expect((await ask([{ role: "user", content: "hi" }], ["subagent"])).text).toContain('CALL subagent {"task":"say hello","label":"demo"}');
    expect((await ask([{ role: "user", content: "hi" }], ["todo", "subagent"])).text).toContain('CALL todo {"action":"read"}');
  });
});
