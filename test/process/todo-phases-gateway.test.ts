import { describe, expect, it } from "vitest";
import type { RuntimeEvents } from "../../src/port/events.js";
import type { RecordedRequest } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf, openaiConfig } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();

const AGENTS = {
  main: "---\nname: Main\n---\nYou plan in phases.",
  lister: "---\nname: Lister\ntodo_style: list\n---\nYou plan in lists.",
};

function gateway(todo: Record<string, unknown> = { enabled: true, style: "phases" }): Harness {
  return harness({ agents: AGENTS, config: { ...openaiConfig(model.server.url), tools: { todo, ...DEFAULT_TOOLS_OFF } } });
}

type Message = { role: string; content: string };
const messagesOf = (r: RecordedRequest) => r.body.messages as Message[];
const toolResults = (r: RecordedRequest) =>
  messagesOf(r)
    .filter((m) => m.role === "tool")
    .map((m) => m.content);
const INIT = call("todo", {
  op: "init",
  list: [
    { phase: "Build", items: ["Write parser", "Add tests"] },
    { phase: "Ship", items: ["Release"] },
  ],
});

describe("the phases style through the gateway", () => {
  it("the model gets the phases tool, ops change the plan, results stay silent", async () => {
    const h = gateway();
    const updates: RuntimeEvents["plan.updated"][] = [];
    h.runtime.on("plan.updated", (e) => updates.push(e));
    const { json } = await h.chat({ message: [INIT, call("todo", { op: "done", task: "Write parser" })].join("\n"), session: "p" });
    expect(json.delivered).toEqual([{ from: "agent", text: json.reply }]);
    const last = model.server.requests.at(-1)!;
    const todo = last.body.tools.find((t: { function: { name: string } }) => t.function.name === "todo");
    expect(todo.function.parameters.properties.op.enum).toEqual(["init", "start", "done", "drop", "rm", "append", "view"]);
    const [, done] = toolResults(last);
    expect(done).toContain("Add tests");
    expect(done).not.toContain("Errors:");
    expect(updates.at(-1)!.completedTasks).toEqual([{ phase: "Build", content: "Write parser" }]);
    const view = await jsonOf(await h.request("/v1/sessions/agent:main:http:p/todos"));
    expect(view).toEqual({
      style: "phases",
      phases: [
        {
          name: "Build",
          tasks: [
            { content: "Write parser", status: "completed" },
            { content: "Add tests", status: "in_progress" },
          ],
        },
        { name: "Ship", tasks: [{ content: "Release", status: "pending" }] },
      ],
    });
  });

  it("a failing op is an Errors: result and changes nothing", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "e" });
    await h.chat({ message: call("todo", { op: "done", task: "task-3" }), session: "e" });
    const result = toolResults(model.server.requests.at(-1)!).at(-1);
    expect(result).toMatch(/^Errors: Task "task-3" not found/);
    expect((await h.chat({ message: "/todo", session: "e" })).json.reply).toBe("# Build\n- [/] Write parser\n- [ ] Add tests\n\n# Ship\n- [ ] Release");
  });

  it("AGENT.md todo_style overrides tools.todo.style", async () => {
    const h = gateway();
    await h.chat({ message: "SAY hi", agent: "lister" });
    const todo = model.server.requests.at(-1)!.body.tools.find((t: { function: { name: string } }) => t.function.name === "todo");
    expect(Object.keys(todo.function.parameters.properties)).toEqual(["action", "todos"]);
    const agents = await jsonOf(await h.request("/v1/agents"));
    expect(agents.agents.map((a: { tools: string[] }) => a.tools)).toEqual([
      ["spawn", "subagent", "todo"],
      ["spawn", "subagent", "todo"],
    ]);
  });

  it("both styles share one capacity, and /clear empties either", async () => {
    const h = gateway({ enabled: true, style: "phases", max_plans: 1 });
    await h.chat({ message: INIT, session: "cap" });
    await h.chat({ message: call("todo", { action: "write", todos: [{ id: "1", content: "x" }] }), agent: "lister", session: "cap" });
    expect(toolResults(model.server.requests.at(-1)!)[0]).toBe("todo session capacity reached; clear an obsolete plan before creating another");
    await h.chat({ message: "/clear", session: "cap" });
    expect(h.plans.size).toBe(0);
    expect((await h.chat({ message: "/todo", session: "cap" })).json.reply).toMatch(/^The plan is empty\. Write one with \/todo edit/);
  });
});

describe("/todo", () => {
  it("shows the plan as Markdown and never reaches the model", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "show" });
    const before = model.server.requests.length;
    const { json } = await h.chat({ message: "/todo", session: "show" });
    expect(json.reply).toBe("# Build\n- [/] Write parser\n- [ ] Add tests\n\n# Ship\n- [ ] Release");
    expect(json.delivered).toEqual([{ from: "command", text: json.reply }]);
    expect(model.server.requests.length).toBe(before);
  });

  it("/todo edit replaces the plan; the model's next turn gets the note once", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "edit" });
    const edited = await h.chat({ message: "/todo edit\n# Build\n- [x] Write parser\n- [ ] Add tests\n- [ ] Add docs\n", session: "edit" });
    expect(edited.json.reply).toBe("Plan updated.\n\n# Build\n- [x] Write parser\n- [/] Add tests\n- [ ] Add docs");

    await h.chat({ message: [call("todo", { op: "view" }), "SAY seen"].join("\n"), session: "edit" });
    const [first, second] = model.server.requests.slice(-2);
    for (const request of [first!, second!]) {
      const notes = messagesOf(request).filter((m) => m.role === "system" && m.content.startsWith("[The user changed your plan"));
      expect(notes).toHaveLength(1);
      expect(notes[0]!.content).toContain("- [/] Add tests\n- [ ] Add docs");
      const roles = messagesOf(request).map((m) => m.role);
      expect(roles.indexOf("system", 1)).toBe(roles.lastIndexOf("user") - 0 - 1);
    }
    await h.chat({ message: "SAY again", session: "edit" });
    expect(messagesOf(model.server.requests.at(-1)!).some((m) => m.content?.startsWith?.("[The user changed your plan"))).toBe(false);
    // The note is never kept; the session keeps only a record of the plan the user wrote (for a restart), which no model is sent.
    const system = (await h.runtime.historyOf("agent:main:http:edit")).filter((m) => m.role === "system");
    expect(system.map((m) => m.content)).toEqual(["The user changed the plan with /todo."]);
  });

  it("a bad edit lists its errors and changes nothing", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "bad" });
    const { json } = await h.chat({ message: "/todo edit\n# Build\n- [?] Weird\nnot a task", session: "bad" });
    expect(json.reply).toMatch(/^Nothing changed:\nLine 2: /);
    expect(json.reply).toContain("Line 3: ");
    expect(json.reply).not.toContain("Line 4");
    expect((await h.chat({ message: "/todo", session: "bad" })).json.reply).toBe("# Build\n- [/] Write parser\n- [ ] Add tests\n\n# Ship\n- [ ] Release");
  });

  it("single ops: done, start, drop, rm and append", async () => {
    const h = gateway();
    await h.chat({ message: INIT, session: "ops" });
    const steps: [string, string][] = [
      ["/todo done Write parser", "# Build\n- [x] Write parser\n- [/] Add tests\n\n# Ship\n- [ ] Release"],
      ["/todo append Ship: Announce it", "# Build\n- [x] Write parser\n- [/] Add tests\n\n# Ship\n- [ ] Release\n- [ ] Announce it"],
      ["/todo start Release", "# Build\n- [x] Write parser\n- [ ] Add tests\n\n# Ship\n- [/] Release\n- [ ] Announce it"],
      ["/todo drop Add tests", "# Build\n- [x] Write parser\n- [-] Add tests\n\n# Ship\n- [/] Release\n- [ ] Announce it"],
      ["/todo rm Announce it", "# Build\n- [x] Write parser\n- [-] Add tests\n\n# Ship\n- [/] Release"],
    ];
    for (const [command, plan] of steps) {
      expect((await h.chat({ message: command, session: "ops" })).json.reply, command).toBe(`Plan updated.\n\n${plan}`);
    }
    const missing = await h.chat({ message: "/todo done Nope", session: "ops" });
    expect(missing.json.reply).toMatch(/^Nothing changed\. Errors: Task "Nope" not found/);
  });

  it("list style: /todo shows ids and priorities losslessly and /todo edit keeps them", async () => {
    const h = gateway({ enabled: true });
    await h.chat({
      message: call("todo", {
        action: "write",
        todos: [
          { id: "a", content: "First", priority: "high" },
          { id: "b", content: "Second", status: "completed" },
        ],
      }),
      session: "list",
    });
    const shown = (await h.chat({ message: "/todo", session: "list" })).json.reply as string;
    expect(shown).toBe("# Todos\n- [ ] First (priority: high)\n- [x] Second");
    const edited = await h.chat({ message: `/todo edit\n${shown.replace("[ ] First", "[/] First")}`, session: "list" });
    expect(edited.json.reply).toMatch(/^Plan updated\./);
    const view = await jsonOf(await h.request("/v1/sessions/agent:main:http:list/todos"));
    expect(view.todos).toEqual([
      { id: "a", content: "First", status: "in_progress", priority: "high" },
      { id: "b", content: "Second", status: "completed", priority: "medium" },
    ]);
    expect((await h.chat({ message: "/todo done First", session: "list" })).json.reply).toMatch(/keeps its plan as a list/);
  });
});
