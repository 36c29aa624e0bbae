import { describe, expect, it } from "vitest";
import type { RuntimeEvents } from "../../src/port/events.js";
import type { MessageEvent } from "../../src/runtime/streams/message-stream.js";
import { harness } from "../support/project.js";
import { testTools } from "../support/tools.js";

/**
 * One message's event stream, in the runtime (`handleMessage({onEvent})`,
 * `converse`): what every streamed protocol is a view of.
 */

const todoWrite = (status: string) => `CALL todo {"action":"write","todos":[{"id":"1","content":"Outline","status":"${status}"}]}`;

describe("a message's event stream", () => {
  it("holds its turn's events in order, a subagent only as its start and end, and ends with the message", async () => {
    const h = harness({ config: { tools: { todo: { enabled: true } } }, tools: testTools });
    const seen: MessageEvent[] = [];
    const message = ['CALL echo {"text":"hi"}', `CALL subagent ${JSON.stringify({ task: 'CALL echo {"text":"child"}', label: "c" })}`].join("\n");
    const outcome = await h.runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: message, onEvent: (e) => seen.push(e) });
    const names = seen.map((e) => (e.type === "notice" ? e.event : e.type));
    // The built-in model hands a watched answer over in pieces: the run of text.delta events is one row here.
    const pieces = seen.filter((e) => e.type === "text.delta");
    expect(names.filter((name, i) => !(name === "text.delta" && names[i - 1] === "text.delta"))).toEqual([
      "turn.start",
      "tool.start",
      "tool.end",
      "delivery",
      "tool.start",
      "subagent.start",
      "subagent.end",
      "tool.end",
      "text.delta",
      "delivery",
    ]);
    expect(seen[2]).toEqual({ type: "tool.end", id: expect.any(String), name: "echo", isError: false, text: "echo: hi" });
    // The subagent's result is silent: no text.
    expect(seen[7]).toEqual({ type: "tool.end", id: expect.any(String), name: "subagent", isError: false });
    expect(pieces.map((e) => (e.type === "text.delta" ? e.text : "")).join("")).toBe(outcome.reply);
    // A later message on the session is not this one's.
    const before = seen.length;
    await h.runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "again" });
    expect(seen).toHaveLength(before);
  });

  it("a list-style todo write changes the plan for UIs as the phases style does: plan.updated with the items it completed", async () => {
    const h = harness({ config: { tools: { todo: { enabled: true } } } });
    const updates: RuntimeEvents["plan.updated"][] = [];
    h.runtime.on("plan.updated", (e) => updates.push(e));
    await h.runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: todoWrite("in_progress") });
    await h.runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: todoWrite("completed") });
    const call = { turnId: expect.any(String), callId: expect.any(String) };
    expect(updates).toEqual([
      {
        agentId: "main",
        sessionKey: "agent:main:http:s",
        ...call,
        style: "list",
        phases: [{ name: "Todos", tasks: [{ content: "Outline", status: "in_progress" }] }],
        completedTasks: [],
      },
      {
        agentId: "main",
        sessionKey: "agent:main:http:s",
        ...call,
        style: "list",
        phases: [{ name: "Todos", tasks: [{ content: "Outline", status: "completed" }] }],
        completedTasks: [{ phase: "Todos", content: "Outline" }],
      },
    ]);
  });

  it("a conversation the client keeps runs under a key of its own and leaves nothing behind: history, plan, tool state", async () => {
    const h = harness({ config: { tools: { todo: { enabled: true } } } });
    const before = h.runtime.stats();
    const cleared: RuntimeEvents["session.cleared"][] = [];
    h.runtime.on("session.cleared", (e) => cleared.push(e));
    const outcome = await h.runtime.converse({
      agentId: "main",
      channel: "openai",
      history: [
        { role: "user", content: "earlier" },
        { role: "assistant", content: "yes" },
      ],
      text: todoWrite("pending"),
    });
    expect(outcome.sessionKey).toMatch(/^agent:main:openai:!/);
    expect(outcome.reply).toContain("Updated 1 todos");
    expect(cleared).toEqual([{ agentId: "main", sessionKey: outcome.sessionKey, reason: "release" }]);
    expect(h.runtime.sessionKeys()).toEqual([]);
    expect(h.plans.size).toBe(0);
    expect(h.runtime.stats()).toEqual(before);
  });
});
