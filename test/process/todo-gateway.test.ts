import { describe, expect, it } from "vitest";
import { harness, jsonOf, openaiConfig } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();

const AGENTS = {
  main: "---\nname: Main\n---\nYou plan.",
  helper: "---\nname: Helper\n---\nYou help.",
  notodo: "---\nname: No todo\ntools: [subagent]\n---\nYou never plan.",
};

function gateway(env: Record<string, string> = {}, todo: Record<string, unknown> | null = { enabled: true }) {
  const config = openaiConfig(model.server.url);
  return harness({ config: todo ? { ...config, tools: { todo } } : config, agents: AGENTS, env });
}

const write = (todos: unknown[]) => `${call("todo", { action: "write", todos })}\nSAY done`;
const READ = `${call("todo", { action: "read" })}\nSAY done`;

/** The content of the tool message the model received in its latest request. */
function lastToolResult(): string {
  const messages = model.server.requests.at(-1)!.body.messages as { role: string; content: string }[];
  return messages.filter((m) => m.role === "tool").at(-1)!.content;
}

describe("todo through the gateway", () => {
  it("results reach the model exactly and never appear in delivered", async () => {
    const h = gateway();
    const { json } = await h.chat({ message: write([{ id: "1", content: "Outline <the> talk" }]), session: "s" });
    expect(json.reply).toBe("done");
    expect(json.delivered).toEqual([{ from: "agent", text: "done" }]);
    expect(lastToolResult()).toBe(
      '{"todos":[{"id":"1","content":"Outline <the> talk","status":"pending","priority":"medium"}],"total_count":1,"message":"Updated 1 todos"}',
    );
    const bad = await h.chat({ message: write([{ id: "1" }]), session: "s" });
    expect(bad.json.delivered).toEqual([{ from: "agent", text: "done" }]);
    expect(lastToolResult()).toBe("todo content must contain 1-1024 bytes of nonblank text");
    const history = await h.runtime.historyOf("agent:main:http:s");
    expect(history.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      '{"todos":[{"id":"1","content":"Outline <the> talk","status":"pending","priority":"medium"}],"total_count":1,"message":"Updated 1 todos"}',
      "todo content must contain 1-1024 bytes of nonblank text",
    ]);
  });

  it("the model is shown the todo tool with its schema", async () => {
    const h = gateway();
    await h.chat({ message: "hi" });
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    const tools = model.server.requests.at(-1)!.body.tools as { function: { name: string; parameters: any } }[];
    const todo = tools.find((t) => t.function.name === "todo")!;
    expect(todo.function.parameters.required).toEqual(["action"]);
    expect(todo.function.parameters.properties.action.enum).toEqual(["read", "write"]);
    expect(todo.function.parameters.properties.todos.items.properties.status.enum).toEqual(["pending", "in_progress", "completed", "canceled"]);
  });

  it("GET /v1/sessions/<key>/todos shows what read would return, without creating a plan", async () => {
    const h = gateway();
    const empty = await h.request("/v1/sessions/agent:main:http:view/todos");
    expect(await empty.text()).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
    expect(empty.headers.get("content-type")).toMatch(/application\/json/);
    expect(h.plans.size).toBe(0);
    await h.chat({ message: write([{ id: "a", content: "A", priority: "high" }]), session: "view" });
    await h.chat({ message: READ, session: "view" });
    const view = await h.request("/v1/sessions/agent:main:http:view/todos");
    expect(await view.text()).toBe(lastToolResult());
    expect(await jsonOf(await h.request("/v1/sessions/agent:main:http:view/todos"))).toMatchObject({ total_count: 1 });
    expect((await h.request("/v1/sessions/agent:ghost:http:view/todos")).status).toBe(404);
    expect((await h.request("/v1/sessions/garbage/todos")).status).toBe(400);
  });

  it("/clear empties the session's plan as well as its history", async () => {
    const h = gateway();
    await h.chat({ message: write([{ id: "1", content: "x" }]), session: "c" });
    await h.chat({ message: write([{ id: "1", content: "y" }]), session: "other" });
    expect(h.plans.size).toBe(2);
    await h.chat({ message: "/clear", session: "c" });
    expect(h.plans.size).toBe(1);
    await h.chat({ message: READ, session: "c" });
    expect(lastToolResult()).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
  });

  it("two sessions and two agents keep separate plans", async () => {
    const h = gateway();
    await h.chat({ message: write([{ id: "1", content: "main one" }]), session: "one" });
    await h.chat({ message: write([{ id: "1", content: "main two" }]), session: "two" });
    await h.chat({ message: write([{ id: "1", content: "helper one" }]), session: "one", agent: "helper" });
    for (const [agent, session, content] of [
      ["main", "one", "main one"],
      ["main", "two", "main two"],
      ["helper", "one", "helper one"],
    ]) {
      await h.chat({ message: READ, session, agent });
      expect(JSON.parse(lastToolResult()).todos[0].content).toBe(content);
    }
  });

  it("an agent whose allowlist lacks todo neither sees nor runs it", async () => {
    const h = gateway();
    await h.chat({ message: write([{ id: "1", content: "sneaky" }]), agent: "notodo" });
    const request = model.server.requests.at(-2)!;
    expect((request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name)).not.toContain("todo");
    expect(lastToolResult()).toMatch(/^tool "todo" is not available to this agent/);
    expect(h.plans.size).toBe(0);
    const agents = await jsonOf(await h.request("/v1/agents"));
    expect(agents.agents.find((a: { id: string }) => a.id === "notodo").tools).not.toContain("todo");
  });

  it("is off by default, and PICOCLAW_TOOLS_TODO_ENABLED=true turns it on with no config change", async () => {
    const off = gateway({}, null);
    await off.chat({ message: "hi" });
    expect((model.server.requests.at(-1)!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name)).not.toContain("todo");
    await off.chat({ message: write([{ id: "1", content: "x" }]) });
    expect(lastToolResult()).toMatch(/^tool "todo" is not available/);

    const on = gateway({ PICOCLAW_TOOLS_TODO_ENABLED: "true" }, null);
    await on.chat({ message: write([{ id: "1", content: "x" }]) });
    expect(lastToolResult()).toMatch(/"message":"Updated 1 todos"/);
    expect(on.plans.size).toBe(1);
  });

  it("/todo refuses to keep a plan for an agent without the todo tool", async () => {
    const h = gateway({}, null);
    for (const message of ["/todo", "/todo edit\n- [ ] sneaky"]) {
      expect((await h.chat({ message })).json.reply).toMatch(/^This agent has no todo tool/);
    }
    expect(h.plans.size).toBe(0);
  });

  it("tools.todo.max_plans caps the plans of the whole gateway", async () => {
    const h = gateway({}, { enabled: true, max_plans: 1 });
    await h.chat({ message: write([{ id: "1", content: "x" }]), session: "first" });
    await h.chat({ message: write([{ id: "1", content: "x" }]), session: "second" });
    expect(lastToolResult()).toBe("todo session capacity reached; clear an obsolete plan before creating another");
  });
});
