import { looseState } from "../support/tools.js";
import { describe, expect, it } from "vitest";
import type { RuntimeEvents } from "../../src/port/events.js";
import { ToolSet, parametersSchema } from "../../src/tools/tool-set.js";
import { PHASES_DESCRIPTION, createPhasesStore, createPhasesTool } from "../../src/features/todo/phases/tool.js";
import type { PhasePlan } from "../../src/features/todo/phases/plan.js";
import type { ToolResult } from "../../src/tools/tool.js";

const KEY = "agent:main:http:s";

function setup(maxPlans = 256, durable = false) {
  const store = createPhasesStore(maxPlans);
  const tool = createPhasesTool(store, { isDurable: () => durable });
  // What the tool publishes, with the scope the pipeline adds (the todo feature emits it as plan.updated).
  const updates: RuntimeEvents["plan.updated"][] = [];
  const ctx = (agentId = "main", sessionKey = KEY) => ({
    agentId,
    sessionKey,
    turnId: "t1",
    callId: "c1",
    signal: new AbortController().signal,
    state: looseState(),
    publish: (details: unknown) => updates.push({ agentId, sessionKey, ...(details as Omit<RuntimeEvents["plan.updated"], "agentId" | "sessionKey">) }),
  });
  const run = (args: unknown, agentId?: string, sessionKey?: string): Promise<ToolResult> =>
    Promise.resolve(tool.execute(args as never, ctx(agentId, sessionKey)));
  return { store, tool, run, updates, ctx };
}

const init = {
  op: "init",
  list: [
    { phase: "Build", items: ["Design", "Test"] },
    { phase: "Ship", items: ["Release"] },
  ],
};

describe("phases tool: results", () => {
  it("is named todo, off by default, and checks its own arguments", () => {
    const { tool } = setup();
    expect(tool.name).toBe("todo");
    expect(tool.enabledByDefault).toBe(false);
    expect(tool.validatesOwnArguments).toBe(true);
  });

  it("a successful op answers silently with the plan text and structured details", async () => {
    const { run } = setup();
    const result = await run(init);
    expect(result).toMatchObject({ silent: true, isError: false });
    expect(result.forUser).toBeUndefined();
    expect(result.forLLM).toContain('- Design (in_progress, phase "Build")');
    expect(result.details).toEqual({
      phases: [
        {
          name: "Build",
          tasks: [
            { content: "Design", status: "in_progress" },
            { content: "Test", status: "pending" },
          ],
        },
        { name: "Ship", tasks: [{ content: "Release", status: "pending" }] },
      ],
      completedTasks: [],
      storage: "memory",
    });
    // Kept with the result in the history, where a restart finds the plan again.
    expect(result.keepDetails).toBe(true);
  });

  it('storage is "session" when the session is kept on disk, "memory" otherwise, for changes and views alike', async () => {
    const durable = setup(256, true);
    expect((await durable.run(init)).details).toMatchObject({ storage: "session" });
    expect((await durable.run({ op: "view" })).details).toMatchObject({ storage: "session" });
    const inMemory = setup(256, false);
    expect((await inMemory.run({ op: "view" })).details).toMatchObject({ storage: "memory" });
    // A tool without a host that says otherwise keeps plans in memory.
    const bare = createPhasesTool(createPhasesStore());
    expect((await Promise.resolve(bare.execute({ op: "view" } as never, durable.ctx()))).details).toMatchObject({ storage: "memory" });
  });

  it("a failed op is an error result whose text is Errors: and the messages joined", async () => {
    const { run } = setup();
    await run(init);
    expect(await run({ op: "append", phase: "Ship", items: ["Design", "Test"] })).toEqual({
      forLLM: 'Errors: Task "Design" already exists; Task "Test" already exists',
      silent: false,
      isError: true,
    });
  });

  it("the details survive the tool pipeline, and the model sees only the text", async () => {
    const { tool, ctx } = setup();
    const set = new ToolSet([tool]);
    const result = await set.execute({ id: "c1", type: "function", function: { name: "todo", arguments: JSON.stringify(init) } }, ctx());
    expect(result.details).toMatchObject({ completedTasks: [] });
    expect(result.forLLM).not.toContain("completedTasks");
  });

  it("view shows the stored plan without writing: viewing nothing creates no plan", async () => {
    const { run, store } = setup();
    expect(await run({ op: "view" })).toMatchObject({ forLLM: "Todo list is empty.", silent: true, isError: false });
    expect(store.size).toBe(0);
    await run(init);
    expect((await run({ op: "view" })).forLLM).toContain("Plan:\nBuild (0/2 completed)");
  });

  it("rm alone keeps the phases, so the plan keeps its store slot and its headings", async () => {
    const { run, store } = setup();
    await run(init);
    expect(store.size).toBe(1);
    expect((await run({ op: "rm" })).forLLM).toBe("Todo list cleared.");
    expect(store.size).toBe(1);
    expect(store.read("main", KEY)).toEqual([
      { name: "Build", tasks: [] },
      { name: "Ship", tasks: [] },
    ]);
  });

  it("teaches every op, exact task names, and atomic errors in its description", () => {
    for (const idea of [
      /"op":"init"/,
      /"op":"start"/,
      /"op":"done"/,
      /"op":"drop"/,
      /"op":"rm"/,
      /"op":"append"/,
      /"op":"view"/,
      /exact text, not by ids/,
      /changes nothing/,
      /3 or more distinct steps/,
    ]) {
      expect(PHASES_DESCRIPTION).toMatch(idea);
    }
  });

  it("shows the model a JSON Schema with the ops and the top-level fields", () => {
    const schema = parametersSchema(setup().tool) as { properties: Record<string, { enum?: string[] }>; required: string[]; additionalProperties: boolean };
    expect(Object.keys(schema.properties)).toEqual(["op", "task", "phase", "items", "list"]);
    expect(schema.properties.op!.enum).toEqual(["init", "start", "done", "drop", "rm", "append", "view"]);
    expect(schema.required).toEqual(["op"]);
    expect(schema.additionalProperties).toBe(false);
  });
});

describe("phases tool: argument shape", () => {
  it.each<[string, unknown, string]>([
    ["no op", {}, "Errors: op must be one of init, start, done, drop, rm, append, view"],
    ["an unknown op", { op: "finish" }, "Errors: op must be one of init, start, done, drop, rm, append, view"],
    ["arguments that are not an object", ["init"], "Errors: op must be one of init, start, done, drop, rm, append, view"],
    ["an unknown field", { op: "view", action: "read" }, 'Errors: Unknown field "action"'],
    ["a task that is not a string", { op: "done", task: 3 }, "Errors: task must be a string"],
    ["a phase that is not a string", { op: "done", phase: ["A"] }, "Errors: phase must be a string"],
    ["items with a number", { op: "append", phase: "A", items: ["a", 1] }, "Errors: items must be an array of strings"],
    ["items as one string", { op: "append", phase: "A", items: "a" }, "Errors: items must be an array of strings"],
    ["a list entry that is not an object", { op: "init", list: ["A"] }, 'Errors: list must be an array of {"phase", "items"} objects'],
    [
      "a list entry with an unknown key",
      { op: "init", list: [{ phase: "A", items: ["a"], done: true }] },
      'Errors: list must be an array of {"phase", "items"} objects',
    ],
    [
      "every shape error at once",
      { op: "zap", task: 1, extra: 2 },
      'Errors: Unknown field "extra"; op must be one of init, start, done, drop, rm, append, view; task must be a string',
    ],
  ])("%s", async (_name, args, message) => {
    const { run, store } = setup();
    await run(init);
    const before = store.read("main", KEY);
    expect(await run(args)).toEqual({ forLLM: message, silent: false, isError: true });
    expect(store.read("main", KEY)).toBe(before);
  });

  it("a field given as null is an invalid argument, not an absent one: done {task: null} completes nothing", async () => {
    const { run, store } = setup();
    await run(init);
    const before = store.read("main", KEY);
    const result = await run({ op: "done", task: null, phase: "Build", items: null, list: null });
    expect(result).toEqual({
      forLLM: 'Errors: task must be a string; items must be an array of strings; list must be an array of {"phase", "items"} objects',
      silent: false,
      isError: true,
    });
    expect(store.read("main", KEY)).toBe(before);
  });

  it("needs an agent and a session from the pipeline", async () => {
    const { run } = setup();
    expect(await run({ op: "view" }, "", KEY)).toEqual({ forLLM: "todo requires an agent and session context", silent: false, isError: true });
    expect((await run({ op: "view" }, "main", "")).forLLM).toBe("todo requires an agent and session context");
  });
});

describe("phases tool: atomic failure through a real PlanStore", () => {
  const failing: [string, unknown][] = [
    ["append with a duplicate among new tasks", { op: "append", phase: "Build", items: ["New", "Release"] }],
    [
      "init with a duplicate phase",
      {
        op: "init",
        list: [
          { phase: "A", items: ["x"] },
          { phase: "A", items: ["y"] },
        ],
      },
    ],
    ["start of an unknown task", { op: "start", task: "task-2" }],
    ["done on an unknown phase", { op: "done", phase: "Nope" }],
    ["rm of a blank task", { op: "rm", task: " " }],
  ];

  it.each(failing)("%s leaves the stored plan exactly as it was and emits nothing", async (_name, args) => {
    const { run, store, updates } = setup();
    await run(init);
    await run({ op: "done", task: "Design" });
    const before = store.read("main", KEY);
    const emitted = updates.length;
    const result = await run(args);
    expect(result.isError).toBe(true);
    expect(result.forLLM).toMatch(/^Errors: /);
    expect(store.read("main", KEY)).toBe(before);
    expect(updates).toHaveLength(emitted);
  });

  it("a failing op on a session with no plan creates none", async () => {
    const { run, store } = setup();
    expect((await run({ op: "done", task: "x" })).forLLM).toBe('Errors: Task "x" not found (the todo list is empty; create it with init)');
    expect(store.size).toBe(0);
  });

  it("stored plans are frozen copies: neither the details nor the arguments can reach them", async () => {
    const { run, store } = setup();
    const args = { op: "init", items: ["a", "b"] };
    const result = await run(args);
    args.items.push("c");
    const stored = store.read("main", KEY)!;
    expect(() => (stored[0]!.tasks as unknown as unknown[]).push({ content: "x" })).toThrow(TypeError);
    expect(() => ((result.details as { phases: { name: string }[] }).phases[0]!.name = "changed")).toThrow(TypeError);
    expect(store.read("main", KEY)).toEqual([
      {
        name: "Tasks",
        tasks: [
          { content: "a", status: "in_progress" },
          { content: "b", status: "pending" },
        ],
      },
    ]);
  });
});

describe("phases tool: plan.updated", () => {
  it("each change publishes the plan and the tasks it completed, with its scope", async () => {
    const { run, updates } = setup();
    await run(init);
    await run({ op: "done", phase: "Build" });
    expect(updates).toEqual([
      expect.objectContaining({ agentId: "main", sessionKey: KEY, style: "phases", completedTasks: [] }),
      {
        agentId: "main",
        sessionKey: KEY,
        style: "phases",
        phases: [
          {
            name: "Build",
            tasks: [
              { content: "Design", status: "completed" },
              { content: "Test", status: "completed" },
            ],
          },
          { name: "Ship", tasks: [{ content: "Release", status: "in_progress" }] },
        ],
        completedTasks: [
          { phase: "Build", content: "Design" },
          { phase: "Build", content: "Test" },
        ],
      },
    ]);
  });

  it("a view publishes nothing; rm alone publishes the phases with no task", async () => {
    const { run, updates } = setup();
    await run({ op: "view" });
    expect(updates).toEqual([]);
    await run(init);
    await run({ op: "rm" });
    expect(updates.at(-1)).toMatchObject({
      phases: [
        { name: "Build", tasks: [] },
        { name: "Ship", tasks: [] },
      ],
      completedTasks: [],
    });
  });
});

describe("phases tool: store, keys and capacity", () => {
  it("plans are keyed by agent and session from the context", async () => {
    const { run, store } = setup();
    await run({ op: "init", items: ["one"] }, "main", "k1");
    await run({ op: "init", items: ["two"] }, "other", "k1");
    await run({ op: "init", items: ["three"] }, "main", "k2");
    const first = (plan: PhasePlan | undefined) => plan?.[0]?.tasks[0]?.content;
    expect([first(store.read("main", "k1")), first(store.read("other", "k1")), first(store.read("main", "k2"))]).toEqual(["one", "two", "three"]);
  });

  it("a new plan beyond capacity is refused with the list tool's message after Errors: ; existing plans still change", async () => {
    const { run, store } = setup(1);
    await run(init, "main", "a");
    expect(await run(init, "main", "b")).toEqual({
      forLLM: "Errors: todo session capacity reached; clear an obsolete plan before creating another",
      silent: false,
      isError: true,
    });
    expect(store.read("main", "b")).toBeUndefined();
    expect((await run({ op: "append", phase: "Ship", items: ["Announce"] }, "main", "a")).isError).toBe(false);
    expect((await run({ op: "view" }, "main", "b")).isError).toBe(false);
  });

  it("a plan emptied by rm keeps its slot; /clear (the store's clearSession) frees it", async () => {
    const { run, store } = setup(1);
    await run(init, "main", "a");
    await run({ op: "rm" }, "main", "a");
    expect((await run(init, "main", "b")).forLLM).toBe("Errors: todo session capacity reached; clear an obsolete plan before creating another");
    await store.clearSession("a");
    expect((await run(init, "main", "b")).isError).toBe(false);
  });

  it("a capacity refusal publishes nothing", async () => {
    const { run, updates } = setup(1);
    await run(init, "main", "a");
    await run(init, "main", "b");
    expect(updates).toHaveLength(1);
  });

  it("concurrent appends to one plan all land, in arrival order", async () => {
    const { run, store } = setup();
    await run({ op: "init", items: ["start"] });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => run({ op: "append", phase: "Tasks", items: [`t${i}`] })));
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(store.read("main", KEY)![0]!.tasks.map((t) => t.content)).toEqual(["start", ...Array.from({ length: 30 }, (_, i) => `t${i}`)]);
  });
});
