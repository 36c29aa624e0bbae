import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { loadConfig } from "../../src/house.js";
import { builtinConfigSchema } from "../../src/house.js";
import { ConfigError } from "../../src/errors.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { harness, jsonOf, writeProject } from "../support/project.js";

const configSchema = builtinConfigSchema();

/** Sessions held in memory: how many, how much, and which go first (README, "Security and limits"). */

function runtimeWith(model: ControlledModel, session: Record<string, unknown>) {
  const agents = new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\ntools: []\n---\nPrompt.").agent]]);
  return new Runtime({ config: configSchema.parse({ session }), agents, models: single(model) });
}

const key = (chat: string) => `agent:main:http:${chat}`;

describe("sessions held in memory", () => {
  it("an idle session is evicted once more than max_sessions are held; one whose turn is running never is", async () => {
    const model = new ControlledModel();
    const runtime = runtimeWith(model, { max_sessions: 2 });
    const say = async (chat: string, text: string, reply: string) => {
      const answered = runtime.handleMessage({ agentId: "main", channel: "http", chatId: chat, text });
      const calls = await model.calls(model.pending.length + 1);
      calls.at(-1)!.resolve({ text: reply });
      return answered;
    };
    await say("a", "first", "one");
    // A's second turn is running (its model call unanswered) while three other sessions come and go.
    const running = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "a", text: "second" });
    const pending = (await model.calls(2))[1]!;
    for (const chat of ["b", "c", "d"]) await say(chat, "hi", "hello");
    expect(runtime.sessionKeys()).toEqual([key("a"), key("d")]);
    expect(runtime.stats().sessions).toBe(2);
    pending.resolve({ text: "two" });
    await running;
    expect((await runtime.historyOf(key("a"))).map((m) => m.content)).toEqual(["first", "one", "second", "two"]);
    expect(await runtime.historyOf(key("b"))).toEqual([]);
    // Now idle again, A is the least recently used of the two once E arrives.
    await say("d", "again", "hello");
    await say("e", "hi", "hello");
    expect(runtime.sessionKeys()).toEqual([key("d"), key("e")]);
  });

  it("with store memory, evicting a session forgets its history only: its todo plan stays", async () => {
    const h = harness({ config: { session: { store: "memory", max_sessions: 1 }, tools: { todo: { enabled: true } } } });
    const plan = 'CALL todo {"action":"write","todos":[{"id":"1","content":"Keep me"}]}';
    expect((await h.chat({ message: plan, session: "a" })).status).toBe(200);
    expect((await h.chat({ message: "hello", session: "b" })).status).toBe(200);
    expect(h.runtime.sessionKeys()).toEqual([key("b")]);
    expect((await jsonOf(await h.request(`/v1/sessions/${key("a")}/history`))).messages).toEqual([]);
    const todos = await jsonOf(await h.request(`/v1/sessions/${key("a")}/todos`));
    expect(todos.todos).toEqual([{ id: "1", content: "Keep me", status: "pending", priority: "medium" }]);
  });

  it("the history in memory stays within session.max_bytes, with the newest sessions kept", async () => {
    const h = harness({ config: { agents: { defaults: { max_history_bytes: 64 * 1024 } }, session: { max_bytes: 1024 * 1024 } } });
    for (let n = 0; n < 40; n++) expect((await h.chat({ message: `${n} ${"x".repeat(40_000)}`, session: `s${n}` })).status).toBe(200);
    const { sessions, historyBytes } = h.runtime.stats();
    expect(historyBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(historyBytes).toBeGreaterThan(1024 * 1024 - 2 * 64 * 1024);
    expect(h.runtime.sessionKeys()).toEqual(Array.from({ length: sessions }, (_, i) => key(`s${40 - sessions + i}`)));
  });

  it("session.max_bytes below agents.defaults.max_history_bytes is a config error naming the path", () => {
    const problems = (config: unknown): string[] => {
      try {
        loadConfig({ env: {}, cwd: writeProject({ config, agents: {} }) });
        return [];
      } catch (error) {
        if (error instanceof ConfigError) return [...error.problems];
        throw error;
      }
    };
    expect(problems({ session: { max_bytes: 2 * 1024 * 1024 } })).toEqual([
      "session.max_bytes: must be at least agents.defaults.max_history_bytes (4194304): one session must fit",
    ]);
    expect(problems({ session: { max_bytes: 2 * 1024 * 1024 }, agents: { defaults: { max_history_bytes: 1024 * 1024 } } })).toEqual([]);
    expect(problems({ session: { max_session: 3 } })).toEqual(['session: unknown key "max_session"']);
    expect(problems({ agents: { defaults: { max_history_bytes: 1000 } }, session: { max_sessions: 0 } })).toEqual([
      "agents.defaults.max_history_bytes: must be >= 16384",
      "session.max_sessions: must be >= 1",
    ]);
  });
});
