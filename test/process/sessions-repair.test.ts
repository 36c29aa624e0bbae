import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LOST_RESULT } from "../../src/session/jsonl/transcript.js";
import { anthropicError, anthropicMessage } from "../support/fake-anthropic.js";
import { fakeModelServers, textCompletion } from "../support/fake-openai.js";
import { harness, jsonOf, openaiConfig, tempDir } from "../support/project.js";

/**
 * A damaged session file (a torn last line, a corrupt line in the middle, a
 * tool call whose result was lost, a result whose call was lost) loads, and
 * the conversation it holds is one OpenAI and Anthropic accept: fake servers
 * that check the rules those APIs enforce answer only a valid request.
 */

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type Wire = any;

/** What OpenAI refuses: a tool message that answers no call of the assistant message before it, or a call left without its result. */
function openaiProblem(messages: Wire[]): string | undefined {
  let waiting = new Set<string>();
  for (const [i, message] of messages.entries()) {
    if (message.role === "tool") {
      if (!waiting.delete(message.tool_call_id))
        return `messages[${i}]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      continue;
    }
    if (waiting.size > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${[...waiting].join(", ")}`;
    waiting = new Set(message.role === "assistant" ? (message.tool_calls ?? []).map((call: Wire) => call.id) : []);
  }
  return waiting.size > 0 ? `unanswered tool calls: ${[...waiting].join(", ")}` : undefined;
}

/** What Anthropic refuses: roles that do not alternate from the user, a tool_use without its tool_result right after, a tool_result without its tool_use. */
function anthropicProblem(messages: Wire[]): string | undefined {
  const blocks = (message: Wire): Wire[] => (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content);
  for (const [i, message] of messages.entries()) {
    if (message.role !== (i % 2 === 0 ? "user" : "assistant"))
      return `messages: roles must alternate between "user" and "assistant", starting with "user" (messages.${i})`;
    const uses =
      i > 0
        ? blocks(messages[i - 1])
            .filter((b) => b.type === "tool_use")
            .map((b) => b.id)
        : [];
    const results = blocks(message)
      .filter((b) => b.type === "tool_result")
      .map((b) => b.tool_use_id);
    for (const id of results) if (!uses.includes(id)) return `messages.${i}: unexpected tool_use_id found in tool_result blocks: ${id}`;
    if (message.role === "user")
      for (const id of uses) if (!results.includes(id)) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${id}`;
  }
  return undefined;
}

const serve = fakeModelServers();

const call = (id: string) => ({ id, type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } });

/** A project whose session folder already holds a damaged history for agent:main:http:s1. */
function damagedProject(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, "sessions"), { recursive: true });
  const lines = [
    JSON.stringify({ role: "user", content: "q1" }),
    JSON.stringify({ role: "assistant", content: "a1" }),
    // The call's line is corrupt: its result is left without it.
    JSON.stringify({ role: "user", content: "q2" }),
    '{"role":"assistant","content":null,"tool_calls":[{"id":"call_2"',
    JSON.stringify({ role: "tool", tool_call_id: "call_2", content: "r2" }),
    JSON.stringify({ role: "assistant", content: "a2" }),
    // The result of this call was lost.
    JSON.stringify({ role: "user", content: "q3" }),
    JSON.stringify({ role: "assistant", content: null, tool_calls: [call("call_3")] }),
    JSON.stringify({ role: "assistant", content: "a3" }),
  ];
  writeFileSync(path.join(dir, "sessions", "agent_main_http_s1.jsonl"), `${lines.join("\n")}\n{"role":"user","content":"q4 cut sh`);
  return dir;
}

const repaired = [
  { role: "user", content: "q1" },
  { role: "assistant", content: "a1" },
  { role: "user", content: "q2" },
  { role: "assistant", content: "a2" },
  { role: "user", content: "q3" },
  { role: "assistant", content: null, tool_calls: [call("call_3")] },
  { role: "tool", tool_call_id: "call_3", content: LOST_RESULT, is_error: true },
  { role: "assistant", content: "a3" },
];

describe("a damaged session file", () => {
  it("loads with a warning for each problem, naming the file and line, and works against OpenAI's rules", async () => {
    const server = await serve((request) => {
      const problem = openaiProblem(request.body.messages);
      return problem
        ? { status: 400, json: { error: { message: problem, type: "invalid_request_error", param: "messages", code: null } } }
        : textCompletion("fine");
    });
    const dir = damagedProject();
    const h = harness({ dir, config: openaiConfig(server.url, { stream: false }) });
    const res = await h.chat({ message: "q5", session: "s1" });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const file = path.join(dir, "sessions", "agent_main_http_s1.jsonl");
    expect(h.logger.lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      expect.stringMatching(new RegExp(`^${file.replace(/[.]/g, "\\.")}: line 4 is not JSON`)),
      `${file}: line 10 is cut short (35 bytes without a line break: a write that never finished); left out`,
      `${file}: a result for the tool call call_2 came with no call before it; dropped`,
      `${file}: the tool call call_3 had no result; an error result says so`,
    ]);
    expect(server.requests[0]!.body.messages.slice(1, -1)).toEqual(
      repaired.map((m) => (m.role === "tool" ? { role: "tool", tool_call_id: m.tool_call_id, content: m.content } : m)),
    );
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:s1/history"));
    expect(history.messages).toEqual([...repaired, { role: "user", content: "q5" }, { role: "assistant", content: "fine" }]);
    // The turn rewrote the file whole: it reads back clean.
    expect(
      readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).toEqual(history.messages);
  });

  it("works against Anthropic's rules too", async () => {
    const server = await serve((request) => {
      const problem = anthropicProblem(request.body.messages);
      return problem ? anthropicError(400, "invalid_request_error", problem) : anthropicMessage([{ type: "text", text: "fine" }]);
    });
    const config = {
      agents: { defaults: { model_name: "claude" } },
      model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: server.url, api_key: "sk-ant-test", stream: false }],
    };
    const h = harness({ dir: damagedProject(), config });
    const res = await h.chat({ message: "q5", session: "s1" });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.reply).toBe("fine");
    const sent = server.requests[0]!.body.messages as Wire[];
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]);
  });
});
