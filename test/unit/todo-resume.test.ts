import { describe, expect, it } from "vitest";
import { TODO_RECORD, latestKeptPlan, openTasksOnly } from "../../src/features/todo/resume.js";
import type { ChatMessage } from "../../src/models/message.js";

const plan = (content: string, status = "pending") => [{ name: "P", tasks: [{ content, status }] }];
const callOf = (id: string, name = "todo"): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: "{}" } }],
});

describe("the latest plan a history keeps", () => {
  it("is the newest successful todo result's details or /todo record, whichever came last", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "go" },
      callOf("c1"),
      { role: "tool", tool_call_id: "c1", content: "ok", details: { phases: plan("first") } },
      { role: "assistant", content: "done" },
      { role: "system", content: "The user changed the plan with /todo.", record: { type: TODO_RECORD, phases: plan("edited") } },
    ];
    expect(latestKeptPlan(messages, "todo")).toEqual(plan("edited"));
    expect(latestKeptPlan(messages.slice(0, 4), "todo")).toEqual(plan("first"));
  });

  it("skips failed results, other tools' details and details that are not a plan (the file is read from outside)", () => {
    const messages: ChatMessage[] = [
      callOf("c1"),
      { role: "tool", tool_call_id: "c1", content: "ok", details: { phases: plan("good") } },
      callOf("c2", "exec"),
      { role: "tool", tool_call_id: "c2", content: "ok", details: { phases: plan("not a todo call") } },
      callOf("c3"),
      { role: "tool", tool_call_id: "c3", content: "Errors: x", is_error: true, details: { phases: plan("failed") } },
      callOf("c4"),
      { role: "tool", tool_call_id: "c4", content: "ok", details: { phases: [{ name: "P", tasks: [{ content: "x", status: "blocked" }] }] } },
      callOf("c5"),
      { role: "tool", tool_call_id: "c5", content: "ok", details: "phases" },
    ];
    expect(latestKeptPlan(messages, "todo")).toEqual(plan("good"));
    expect(latestKeptPlan([], "todo")).toBeUndefined();
  });

  it("taken up again, it keeps only pending and in-progress tasks, and the phases that still have one", () => {
    expect(
      openTasksOnly([
        {
          name: "A",
          tasks: [
            { content: "a1", status: "completed" },
            { content: "a2", status: "in_progress" },
            { content: "a3", status: "pending" },
          ],
        },
        { name: "B", tasks: [{ content: "b1", status: "abandoned" }] },
      ]),
    ).toEqual([
      {
        name: "A",
        tasks: [
          { content: "a2", status: "in_progress" },
          { content: "a3", status: "pending" },
        ],
      },
    ]);
  });
});
