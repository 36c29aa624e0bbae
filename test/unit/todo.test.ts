import { looseState } from "../support/tools.js";
import { describe, expect, it } from "vitest";
import { createPlanStore, listView } from "../../src/features/todo/plans.js";
import { TODO_DESCRIPTION, createTodoTool, readTodos } from "../../src/features/todo/list/tool.js";
import type { TodoItem } from "../../src/features/todo/list/validate.js";
import { utf8Length } from "../../src/features/todo/text.js";
import type { ToolResult } from "../../src/tools/tool.js";

function setup(maxPlans = 256) {
  const shared = createPlanStore(maxPlans);
  const view = listView(shared);
  // The list view of the production store, plus what the tests look at on the shared store.
  const store = {
    read: view.read,
    write: view.write,
    clearSession: (key: string) => shared.clearSession(key),
    get size() {
      return shared.size;
    },
  };
  const tool = createTodoTool(store);
  const run = (args: unknown, agentId = "main", sessionKey = "agent:main:http:s"): Promise<ToolResult> =>
    Promise.resolve(
      tool.execute(args as never, {
        agentId,
        sessionKey,
        turnId: "t1",
        callId: "c1",
        signal: new AbortController().signal,
        state: looseState(),
        publish: () => {},
      }),
    );
  return { store, tool, run };
}

const item = (id: string, content = `do ${id}`, extra: Record<string, unknown> = {}) => ({ id, content, ...extra });
const ok = (todos: TodoItem[], verb: "Retrieved" | "Updated") => JSON.stringify({ todos, total_count: todos.length, message: `${verb} ${todos.length} todos` });
const full = (id: string, content = `do ${id}`, status = "pending", priority = "medium") => ({ id, content, status, priority }) as TodoItem;

describe("todo: results", () => {
  it("write fills defaults and answers compact JSON with keys in PicoClaw's order, silently", async () => {
    const { run } = setup();
    const result = await run({
      action: "write",
      todos: [{ priority: "high", content: "Draft", id: "1" }, item("2", "Check", { status: "in_progress" })],
    });
    expect(result).toEqual({
      forLLM:
        '{"todos":[{"id":"1","content":"Draft","status":"pending","priority":"high"},{"id":"2","content":"Check","status":"in_progress","priority":"medium"}],"total_count":2,"message":"Updated 2 todos"}',
      silent: true,
      isError: false,
    });
  });

  it("read of nothing is an empty list, never null, and creates no plan", async () => {
    const { run, store } = setup();
    expect((await run({ action: "read" })).forLLM).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
    expect(store.size).toBe(0);
  });

  it("read returns what the last write stored", async () => {
    const { run } = setup();
    await run({ action: "write", todos: [item("a"), item("b", "x", { status: "completed", priority: "low" })] });
    expect((await run({ action: "read" })).forLLM).toBe(ok([full("a"), full("b", "x", "completed", "low")], "Retrieved"));
  });

  it("strings are stored verbatim (spaces, markup, emoji, odd unicode)", async () => {
    const { run } = setup();
    const content = '  <b>Ship</b> & "test" \u2028 😀 \\n  ';
    await run({ action: "write", todos: [item(" id with spaces ", content)] });
    const read = JSON.parse((await run({ action: "read" })).forLLM);
    expect(read.todos[0]).toEqual(full(" id with spaces ", content));
  });

  it("write [] deletes the plan and answers Updated 0 todos", async () => {
    const { run, store } = setup();
    await run({ action: "write", todos: [item("1")] });
    expect(store.size).toBe(1);
    expect((await run({ action: "write", todos: [] })).forLLM).toBe('{"todos":[],"total_count":0,"message":"Updated 0 todos"}');
    expect(store.size).toBe(0);
  });

  it("teaches the intended use in its description", () => {
    for (const idea of [
      /3 or more distinct steps/,
      /read.*before resuming/i,
      /REPLACES the whole list/,
      /in_progress/,
      /only after checking/,
      /canceled/,
      /\[\]/,
      /memory/,
    ]) {
      expect(TODO_DESCRIPTION).toMatch(idea);
    }
  });
});

describe("todo: checks, in order, first failure wins", () => {
  const cases: [string, unknown, string, { agentId?: string; sessionKey?: string }?][] = [
    ["missing agent", { action: "read" }, "todo requires an agent and session context", { agentId: "" }],
    ["missing session", { action: "bogus" }, "todo requires an agent and session context", { sessionKey: "" }],
    ["no action", {}, "action must be read or write"],
    ["action with a different case", { action: "Read" }, "action must be read or write"],
    ["action not a string", { action: 1 }, "action must be read or write"],
    ["arguments not an object", [1, 2], "action must be read or write"],
    ["an unknown argument before action is checked further", { action: "read", todos: [], extra: 1 }, "unknown argument: extra"],
    ["todos on read", { action: "read", todos: [] }, "todos is only accepted for write"],
    ["todos null on read", { action: "read", todos: null }, "todos is only accepted for write"],
    ["write without todos", { action: "write" }, "write requires a todos array; use [] to clear"],
    ["write with todos null", { action: "write", todos: null }, "write requires a todos array; use [] to clear"],
    ["write with an object", { action: "write", todos: { id: "1" } }, "write requires a todos array; use [] to clear"],
    ["a string element", { action: "write", todos: [item("1"), "two"] }, "todos must contain objects"],
    ["a null element", { action: "write", todos: [null] }, "todos must contain objects"],
    ["an array element", { action: "write", todos: [[]] }, "todos must contain objects"],
    [
      "objects are checked before the count",
      { action: "write", todos: [...Array.from({ length: 101 }, (_, i) => item(`${i}`)), 5] },
      "todos must contain objects",
    ],
    ["101 items", { action: "write", todos: Array.from({ length: 101 }, (_, i) => item(`${i}`)) }, "cannot store more than 100 todos"],
    ["an unknown item key", { action: "write", todos: [item("1", "c", { done: true })] }, 'invalid todos: todos[0]: unknown field "done"'],
    ["a wrong JSON type", { action: "write", todos: [item("1"), { id: 2, content: "c" }] }, "invalid todos: todos[1].id: expected string, got number"],
    [
      "shape errors come before item checks",
      {
        action: "write",
        todos: [
          { id: "", content: "" },
          { id: "x", content: "y", status: 1 },
        ],
      },
      "invalid todos: todos[1].status: expected string, got number",
    ],
    ["a null field", { action: "write", todos: [item("1", "c", { priority: null })] }, "todo fields must not be null"],
    ["null before a bad id", { action: "write", todos: [{ id: "", content: null }] }, "todo fields must not be null"],
    ["a missing id", { action: "write", todos: [{ content: "c" }] }, "todo id must contain 1-128 bytes of nonblank text"],
    ["an empty id", { action: "write", todos: [item("")] }, "todo id must contain 1-128 bytes of nonblank text"],
    ["a blank id", { action: "write", todos: [item(" \t\n")] }, "todo id must contain 1-128 bytes of nonblank text"],
    ["a U+3000 id", { action: "write", todos: [item("\u3000")] }, "todo id must contain 1-128 bytes of nonblank text"],
    ["an NBSP and NEL id", { action: "write", todos: [item("\u00a0\u0085")] }, "todo id must contain 1-128 bytes of nonblank text"],
    ["a missing content", { action: "write", todos: [{ id: "1" }] }, "todo content must contain 1-1024 bytes of nonblank text"],
    ["a blank content", { action: "write", todos: [item("1", "\u2003 ")] }, "todo content must contain 1-1024 bytes of nonblank text"],
    ["a repeated id", { action: "write", todos: [item("1"), item("2"), item("1")] }, "todo IDs must be unique"],
    [
      "an id check before a duplicate later",
      { action: "write", todos: [item("1"), item("1", " ")] },
      "todo content must contain 1-1024 bytes of nonblank text",
    ],
    ["a bad status", { action: "write", todos: [item("1", "c", { status: "done" })] }, "invalid todo status"],
    ["an empty status", { action: "write", todos: [item("1", "c", { status: "" })] }, "invalid todo status"],
    ["British cancelled", { action: "write", todos: [item("1", "c", { status: "cancelled" })] }, "invalid todo status"],
    ["a bad priority", { action: "write", todos: [item("1", "c", { priority: "urgent" })] }, "invalid todo priority"],
    ["status before priority", { action: "write", todos: [item("1", "c", { priority: "x", status: "y" })] }, "invalid todo status"],
  ];

  it.each(cases)("%s", async (_name, args, message, ctx) => {
    const { run, store } = setup();
    await run({ action: "write", todos: [item("keep")] }, "main", "agent:main:http:s");
    const result = await run(args, ctx?.agentId ?? "main", ctx?.sessionKey ?? "agent:main:http:s");
    expect(result).toEqual({ forLLM: message, silent: false, isError: true });
    expect(store.read("main", "agent:main:http:s")).toEqual([full("keep")]);
  });

  it("a valid item followed by an invalid one stores nothing", async () => {
    const { run, store } = setup();
    const result = await run({ action: "write", todos: [item("1"), item("2", "c", { status: "nope" })] });
    expect(result.isError).toBe(true);
    expect(store.size).toBe(0);
  });
});

describe("todo: sizes count UTF-8 bytes of non-blank text", () => {
  const accepts = async (id: string, content = "c") => !(await setup().run({ action: "write", todos: [item(id, content)] })).isError;

  it("ids: 32×😀 (128 bytes) yes, 33× no; 64×é yes; ab+42×€ (128 bytes) yes, 43×€ no", async () => {
    expect(utf8Length("😀".repeat(32))).toBe(128);
    expect(await accepts("😀".repeat(32))).toBe(true);
    expect(await accepts("😀".repeat(33))).toBe(false);
    expect(await accepts("é".repeat(64))).toBe(true);
    expect(utf8Length(`ab${"€".repeat(42)}`)).toBe(128);
    expect(await accepts(`ab${"€".repeat(42)}`)).toBe(true);
    expect(await accepts("€".repeat(43))).toBe(false);
    expect(await accepts("x".repeat(128))).toBe(true);
    expect(await accepts("x".repeat(129))).toBe(false);
  });

  it("content: 1024 bytes yes, 1025 no", async () => {
    expect(await accepts("1", "y".repeat(1024))).toBe(true);
    expect(await accepts("1", "y".repeat(1025))).toBe(false);
    expect(await accepts("1", `${"é".repeat(511)}yy`)).toBe(true);
    expect(await accepts("1", `${"é".repeat(512)}y`)).toBe(false);
  });

  it("blank means Unicode White_Space only: U+3000 is blank, U+200B and U+FEFF are not", async () => {
    expect(await accepts("\u3000")).toBe(false);
    expect(await accepts("\u200b")).toBe(true);
    expect(await accepts("\ufeff")).toBe(true);
  });

  it("ids compare exactly: NFC é and NFD é are two ids", async () => {
    const { run, store } = setup();
    const result = await run({ action: "write", todos: [item("\u00e9"), item("e\u0301")] });
    expect(result.isError).toBe(false);
    expect(store.read("main", "agent:main:http:s")!.map((t) => t.id)).toEqual(["\u00e9", "e\u0301"]);
  });

  it("100 items are accepted; 101 are refused and the plan stays intact", async () => {
    const { run, store } = setup();
    const hundred = Array.from({ length: 100 }, (_, i) => item(`${i}`));
    expect(JSON.parse((await run({ action: "write", todos: hundred })).forLLM).total_count).toBe(100);
    const refused = await run({ action: "write", todos: [...hundred, item("100")] });
    expect(refused.forLLM).toBe("cannot store more than 100 todos");
    expect(store.read("main", "agent:main:http:s")).toHaveLength(100);
  });
});

describe("todo: isolation and copies", () => {
  it("plans are keyed by agent and session from the context, never by arguments", async () => {
    const { run } = setup();
    await run({ action: "write", todos: [item("a")] }, "main", "agent:main:http:one");
    await run({ action: "write", todos: [item("b")] }, "main", "agent:main:http:two");
    await run({ action: "write", todos: [item("c")] }, "other", "agent:main:http:one");
    const ids = async (agent: string, key: string) => JSON.parse((await run({ action: "read" }, agent, key)).forLLM).todos.map((t: TodoItem) => t.id);
    expect(await ids("main", "agent:main:http:one")).toEqual(["a"]);
    expect(await ids("main", "agent:main:http:two")).toEqual(["b"]);
    expect(await ids("other", "agent:main:http:one")).toEqual(["c"]);
  });

  it("composite keys cannot collide: (a:b, c) and (a, b:c) are two plans", async () => {
    const { run, store } = setup();
    await run({ action: "write", todos: [item("first")] }, "a:b", "c");
    await run({ action: "write", todos: [item("second")] }, "a", "b:c");
    expect(store.size).toBe(2);
    expect(store.read("a:b", "c")![0]!.id).toBe("first");
    expect(store.read("a", "b:c")![0]!.id).toBe("second");
  });

  it("mutating the arguments or what a read returned cannot reach the store", async () => {
    const { run, store } = setup();
    const todos = [item("1", "original")];
    await run({ action: "write", todos });
    todos[0]!.content = "mutated";
    todos.push(item("2"));
    const stored = store.read("main", "agent:main:http:s")!;
    expect(() => {
      (stored[0] as { content: string }).content = "changed too";
    }).toThrow(TypeError);
    expect(() => (stored as TodoItem[]).push(full("3"))).toThrow(TypeError);
    expect(store.read("main", "agent:main:http:s")).toEqual([full("1", "original")]);
  });

  it("clearing a session drops every agent's plan for that key only", async () => {
    const { run, store } = setup();
    await run({ action: "write", todos: [item("1")] }, "main", "k1");
    await run({ action: "write", todos: [item("1")] }, "helper", "k1");
    await run({ action: "write", todos: [item("1")] }, "main", "k2");
    await store.clearSession("k1");
    expect(store.size).toBe(1);
    expect(store.read("main", "k2")).toHaveLength(1);
  });

  it("readTodos gives the read answer without creating a plan", () => {
    const { store } = setup();
    expect(readTodos(store, "main", "nobody")).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
    expect(store.size).toBe(0);
  });
});

const write = (run: ReturnType<typeof setup>["run"], key: string, todos: unknown[] = [item("1")]) => run({ action: "write", todos }, "main", key);

describe("todo: capacity", () => {
  it("256 plans fit; the 257th new plan is refused and evicts nothing", async () => {
    const { run, store } = setup();
    for (let i = 0; i < 256; i++) expect((await write(run, `k${i}`)).isError).toBe(false);
    expect(store.size).toBe(256);
    const refused = await write(run, "k256");
    expect(refused).toEqual({
      forLLM: "todo session capacity reached; clear an obsolete plan before creating another",
      silent: false,
      isError: true,
    });
    expect(store.size).toBe(256);
    expect(store.read("main", "k0")).toHaveLength(1);
    expect(store.read("main", "k256")).toBeUndefined();
  });

  it("at capacity: reads, rewrites of existing plans and write [] still work; [] frees a slot", async () => {
    const { run, store } = setup(3);
    for (const k of ["a", "b", "c"]) await write(run, k);
    expect((await run({ action: "read" }, "main", "new")).isError).toBe(false);
    expect((await write(run, "new", [])).isError).toBe(false);
    expect((await write(run, "a", [item("1", "changed"), item("2")])).isError).toBe(false);
    expect((await write(run, "d")).isError).toBe(true);
    await write(run, "b", []);
    expect(store.size).toBe(2);
    expect((await write(run, "d")).isError).toBe(false);
    expect(store.size).toBe(3);
  });

  it("completed plans keep their slot", async () => {
    const { run, store } = setup(1);
    await write(run, "a", [item("1", "c", { status: "completed" })]);
    expect(store.size).toBe(1);
    expect((await write(run, "b")).forLLM).toMatch(/capacity reached/);
  });

  it("tools.todo.max_plans sets the capacity", async () => {
    const { run } = setup(2);
    await write(run, "a");
    await write(run, "b");
    expect((await write(run, "c")).isError).toBe(true);
  });
});

describe("todo: concurrency", () => {
  it("concurrent writes on one key: last writer wins, nothing partial", async () => {
    const { run, store } = setup();
    const writes = Array.from({ length: 50 }, (_, n) => run({ action: "write", todos: Array.from({ length: 10 }, (_, i) => item(`${i}`, `write ${n}`)) }));
    const results = await Promise.all(writes);
    expect(results.every((r) => !r.isError)).toBe(true);
    const plan = store.read("main", "agent:main:http:s")!;
    expect(plan).toHaveLength(10);
    expect(new Set(plan.map((t) => t.content))).toEqual(new Set(["write 49"]));
  });

  it("concurrent reads during writes see no plan or a whole one, never a mix", async () => {
    const { run } = setup();
    const ops: Promise<ToolResult>[] = [];
    for (let n = 0; n < 30; n++) {
      ops.push(run({ action: "write", todos: Array.from({ length: 5 }, (_, i) => item(`${i}`, `v${n}`)) }));
      ops.push(run({ action: "read" }));
    }
    const plans = (await Promise.all(ops)).map((r) => JSON.parse(r.forLLM).todos as TodoItem[]);
    for (const plan of plans) {
      expect([0, 5]).toContain(plan.length);
      expect(new Set(plan.map((t) => t.content)).size).toBeLessThanOrEqual(1);
    }
    expect(plans.at(-1)!.map((t) => t.content)).toEqual(Array(5).fill("v29"));
  });

  it("a write then a read in order sees the write", async () => {
    const { run } = setup();
    for (let n = 0; n < 5; n++) {
      await run({ action: "write", todos: [item("1", `v${n}`)] });
      expect(JSON.parse((await run({ action: "read" })).forLLM).todos[0].content).toBe(`v${n}`);
    }
  });

  it("many keys written concurrently lose nothing", async () => {
    const { run, store } = setup(1000);
    await Promise.all(Array.from({ length: 500 }, (_, k) => write(run, `k${k}`, [item("1", `key ${k}`)])));
    expect(store.size).toBe(500);
    for (let k = 0; k < 500; k++) expect(store.read("main", `k${k}`)![0]!.content).toBe(`key ${k}`);
  });

  it("two new keys racing for the last slot: exactly one wins", async () => {
    for (let round = 0; round < 20; round++) {
      const { run, store } = setup(5);
      for (let k = 0; k < 4; k++) await write(run, `k${k}`);
      const [x, y] = await Promise.all([write(run, "x"), write(run, "y")]);
      expect([x.isError, y.isError].sort()).toEqual([false, true]);
      expect(store.size).toBe(5);
    }
  });
});
