import { describe, expect, it } from "vitest";
import { TODO_FAILED, TODO_REMINDER } from "../../src/features/todo/failures.js";
import type { RecordedRequest } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, openaiConfig } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();

const AGENTS = {
  main: "---\nname: Main\n---\nYou plan in phases.",
  lister: "---\nname: Lister\ntodo_style: list\n---\nYou plan in lists.",
};

function gateway(): Harness {
  return harness({ agents: AGENTS, config: { ...openaiConfig(model.server.url), tools: { todo: { enabled: true, style: "phases" }, ...DEFAULT_TOOLS_OFF } } });
}

type Message = { role: string; content: string | null };
const messagesOf = (r: RecordedRequest) => r.body.messages as Message[];
const reminders = (r: RecordedRequest) => messagesOf(r).filter((m) => m.content?.includes(TODO_REMINDER));
const last = () => model.server.requests.at(-1)!;
const INIT = call("todo", { op: "init", items: ["a1", "a2"] });
const BAD = call("todo", { op: "done", task: "nope" });

describe("after a failed todo call", () => {
  it("the next turn's request carries one reminder after the last reply, and the turn after that none", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "r" });
    await h.chat({ message: BAD, session: "r" });
    // The request right after the failed call (same turn) has the error result and no reminder yet.
    expect(reminders(last())).toHaveLength(0);
    await h.chat({ message: "SAY next", session: "r" });
    const next = messagesOf(last());
    const at = next.findIndex((m) => m.content?.includes(TODO_REMINDER));
    expect(reminders(last())).toHaveLength(1);
    expect(next[at]!.role).toBe("system");
    // After the last reply of the failed turn, just before the new message.
    expect(at).toBeGreaterThan(next.findLastIndex((m) => m.role === "assistant"));
    expect(next[at + 1]).toEqual({ role: "user", content: "SAY next" });
    await h.chat({ message: "SAY again", session: "r" });
    expect(reminders(last())).toHaveLength(0);
    // Never kept: the history has no system message and no user message with the reminder.
    const history = await h.runtime.historyOf("agent:main:http:r");
    expect(history.some((m) => m.role === "system" || (typeof m.content === "string" && m.content.includes(TODO_REMINDER)))).toBe(false);
  });

  it("a successful call adds none, and one later in the failed turn forgets the waiting reminder", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "ok" });
    await h.chat({ message: "SAY hi", session: "ok" });
    expect(reminders(last())).toHaveLength(0);
    await h.chat({ message: [BAD, call("todo", { op: "done", task: "a1" })].join("\n"), session: "ok" });
    await h.chat({ message: "SAY after", session: "ok" });
    expect(reminders(last())).toHaveLength(0);
  });

  it("the list style's failures remind too, and the reminder and a /todo edit note both reach the next turn", async () => {
    const h = gateway();
    await h.chat({ message: call("todo", { action: "write" }), agent: "lister", session: "l" });
    await h.chat({ message: "/todo edit\n- [ ] by hand", agent: "lister", session: "l" });
    await h.chat({ message: "SAY next", agent: "lister", session: "l" });
    const system = messagesOf(last()).filter((m) => m.role === "system" && m !== messagesOf(last())[0]);
    expect(system).toHaveLength(1);
    expect(system[0]!.content).toContain("[The user changed your plan with /todo.");
    expect(system[0]!.content).toContain(TODO_REMINDER);
    await h.chat({ message: "SAY again", agent: "lister", session: "l" });
    expect(messagesOf(last()).filter((m) => m.role === "system")).toHaveLength(1);
  });

  it("the user's views hear once that the plan may be stale, and again only after a call succeeded", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "s" });
    const stream = await h.request("/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ message: [BAD, BAD, call("todo", { op: "done", task: "a1" }), BAD].join("\n"), session: "s", stream: true }),
    });
    const failed = (await stream.text()).split("\n\n").filter((block) => block.includes("event: plan.failed"));
    expect(failed).toHaveLength(2);
    expect(failed[0]).toContain(JSON.stringify(TODO_FAILED));
    expect(failed[0]).toContain('"session_key":"agent:main:http:s"');
  });
});
