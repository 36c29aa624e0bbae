import { describe, expect, it } from "vitest";
import { applyPhaseOp, formatErrors, taskNotFound } from "../../src/features/todo/phases/ops.js";
import type { TaskStatus } from "../../src/features/todo/markdown.js";
import { type PhaseOpInput, type PhasePlan, normalisePhases } from "../../src/features/todo/phases/plan.js";
import { cleanText } from "../../src/features/todo/text.js";

type Short = "p" | "i" | "c" | "a";
const STATUS: Record<Short, TaskStatus> = { p: "pending", i: "in_progress", c: "completed", a: "abandoned" };

/** plan({ Build: ["i:Design", "p:Test"] }) — status letter, colon, content. */
function plan(spec: Record<string, string[]>): PhasePlan {
  return Object.entries(spec).map(([name, tasks]) => ({
    name,
    tasks: tasks.map((t) => ({ status: STATUS[t[0] as Short], content: t.slice(2) })),
  }));
}

function ok(current: PhasePlan, input: PhaseOpInput) {
  const result = applyPhaseOp(current, input);
  if (!result.ok) throw new Error(`expected success, got ${result.errors.join("; ")}`);
  return result;
}

function errors(current: PhasePlan, input: PhaseOpInput): string[] {
  const result = applyPhaseOp(current, input);
  if (result.ok) throw new Error("expected errors, got success");
  return result.errors;
}

const sample = () => plan({ Build: ["c:Design", "i:Write tests", "p:Refactor"], Release: ["p:Ship"] });

describe("phases: init", () => {
  it("flat items go to the phase Tasks, all pending, and the first is started", () => {
    const result = ok([], { op: "init", items: ["a", "b"] });
    expect(result.plan).toEqual(plan({ Tasks: ["i:a", "p:b"] }));
    expect(result.changed).toBe(true);
    expect(result.details).toEqual({ phases: result.plan, completedTasks: [] });
  });

  it("flat items take an explicit phase", () => {
    expect(ok([], { op: "init", phase: "Setup", items: ["a"] }).plan).toEqual(plan({ Setup: ["i:a"] }));
  });

  it("the list form creates phases in order", () => {
    const result = ok([], {
      op: "init",
      list: [
        { phase: "One", items: ["a", "b"] },
        { phase: "Two", items: ["c"] },
      ],
    });
    expect(result.plan).toEqual(plan({ One: ["i:a", "p:b"], Two: ["p:c"] }));
  });

  it("replaces everything, completed work included, and reports nothing completed", () => {
    const result = ok(sample(), { op: "init", items: ["Design", "New"] });
    expect(result.plan).toEqual(plan({ Tasks: ["i:Design", "p:New"] }));
    expect(result.details.completedTasks).toEqual([]);
  });

  it("cleans text: line breaks become one space, outer spaces go", () => {
    const result = ok([], { op: "init", list: [{ phase: "  Build\r\n  it ", items: [" Ship\n\n now ", "a\u2028b"] }] });
    expect(result.plan).toEqual(plan({ "Build it": ["i:Ship now", "p:a b"] }));
  });

  it.each<[string, PhaseOpInput]>([
    ["neither list nor items", { op: "init" }],
    ["an empty list", { op: "init", list: [] }],
    ["empty flat items", { op: "init", items: [], phase: "P" }],
  ])("%s: Missing list for init operation", (_name, input) => {
    expect(errors(sample(), input)).toEqual(["Missing list for init operation"]);
  });

  it("list and items together are refused", () => {
    expect(errors([], { op: "init", items: ["a"], list: [{ phase: "P", items: ["b"] }] })).toEqual(["Use either list or items for init, not both"]);
  });

  it("a repeated phase gives one Duplicate phase error, however often it repeats", () => {
    const list = ["A", "B", "A", "A"].map((phase, i) => ({ phase, items: [`t${i}`] }));
    expect(errors([], { op: "init", list })).toEqual(['Duplicate phase "A" in init list']);
  });

  it("phases compare after cleaning", () => {
    expect(
      errors([], {
        op: "init",
        list: [
          { phase: "A", items: ["x"] },
          { phase: " A ", items: ["y"] },
        ],
      }),
    ).toEqual(['Duplicate phase "A" in init list']);
  });

  it("a task repeated within or across phases gives one Duplicate task error per content", () => {
    const list = [
      { phase: "A", items: ["x", "y", "x"] },
      { phase: "B", items: ["x", " y", "z"] },
    ];
    expect(errors([], { op: "init", list })).toEqual(['Duplicate task "x" in init list', 'Duplicate task "y" in init list']);
  });

  it("every problem is reported at once", () => {
    const list = [{ phase: "A", items: ["x", ""] }, { phase: "A", items: [] }, { items: ["x"] }, { phase: " " }];
    expect(errors([], { op: "init", list })).toEqual([
      "Missing task content",
      'Duplicate phase "A" in init list',
      'Missing items for phase "A" in init list',
      "Missing phase name in init list",
      'Duplicate task "x" in init list',
      "Missing items in init list",
    ]);
  });

  it("a blank flat phase is a missing phase name, not the default", () => {
    expect(errors([], { op: "init", phase: " ", items: ["a"] })).toEqual(["Missing phase name"]);
  });

  it("100 tasks fit, 101 do not; content and phase names have byte limits", () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => `task ${i}`);
    expect(ok([], { op: "init", items: items(100) }).plan[0]!.tasks).toHaveLength(100);
    expect(errors([], { op: "init", items: items(101) })).toEqual(["A plan holds at most 100 tasks"]);
    expect(ok([], { op: "init", items: ["é".repeat(512)] }).ok).toBe(true);
    expect(errors([], { op: "init", items: [`${"é".repeat(512)}x`] })).toEqual(["Task content is longer than 1024 bytes"]);
    expect(ok([], { op: "init", phase: "p".repeat(128), items: ["a"] }).ok).toBe(true);
    expect(errors([], { op: "init", phase: "p".repeat(129), items: ["a"] })).toEqual(["Phase name is longer than 128 bytes"]);
  });

  it("at most 100 phases", () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ phase: `P${i}`, items: [`t${i}`] }));
    expect(ok([], { op: "init", list: list(100) }).plan).toHaveLength(100);
    expect(errors([], { op: "init", list: list(101) })).toEqual(["A plan holds at most 100 tasks", "A plan holds at most 100 phases"]);
  });
});

describe("phases: start", () => {
  it("starts the target and sets every other task in progress back to pending", () => {
    const result = ok(sample(), { op: "start", task: "Ship" });
    expect(result.plan).toEqual(plan({ Build: ["c:Design", "p:Write tests", "p:Refactor"], Release: ["i:Ship"] }));
  });

  it.each<[Short, string]>([
    ["c", "completed"],
    ["a", "abandoned"],
  ])("reopens a %s task (%s) as in progress", (letter) => {
    const current = plan({ P: ["i:a", `${letter}:b`] });
    expect(ok(current, { op: "start", task: "b" }).plan).toEqual(plan({ P: ["p:a", "i:b"] }));
  });

  it("finds the task by its cleaned text", () => {
    expect(ok(sample(), { op: "start", task: "  Refactor\n" }).plan[0]!.tasks[2]!.status).toBe("in_progress");
  });

  it("needs a task: missing or blank gives Missing task content", () => {
    expect(errors(sample(), { op: "start" })).toEqual(["Missing task content"]);
    expect(errors(sample(), { op: "start", task: " \n " })).toEqual(["Missing task content"]);
    expect(errors(sample(), { op: "start", phase: "Build" })).toEqual(["Missing task content"]);
  });

  it("lookups are exact: another case or a prefix is not found", () => {
    expect(errors(sample(), { op: "start", task: "ship" })).toEqual(['Task "ship" not found']);
    expect(errors(sample(), { op: "start", task: "Write" })).toEqual(['Task "Write" not found']);
  });

  it("takes the first hit in phase order", () => {
    const current = plan({ A: ["i:x", "p:dup"], B: ["p:dup"] });
    expect(ok(current, { op: "start", task: "dup" }).plan).toEqual(plan({ A: ["p:x", "i:dup"], B: ["p:dup"] }));
  });
});

describe("phases: task not found hints", () => {
  it("an empty list says so", () => {
    expect(errors([], { op: "start", task: "Ship" })).toEqual(['Task "Ship" not found (the todo list is empty; create it with init)']);
  });

  it.each(["task-3", "3", "#3", "Task 12", "step_2", "t7", "TODO-1"])("%s looks like an id: tasks are named by content", (task) => {
    expect(errors(sample(), { op: "done", task })).toEqual([`Task "${task}" not found (tasks are named by their exact content, not by ids or numbers)`]);
  });

  it("an id-like name that exists is simply found", () => {
    expect(ok(plan({ P: ["i:x", "p:3"] }), { op: "done", task: "3" }).plan).toEqual(plan({ P: ["i:x", "c:3"] }));
  });

  it("ordinary names get no hint", () => {
    expect(taskNotFound("task three", sample())).toBe('Task "task three" not found');
  });
});

describe("phases: done and drop", () => {
  it("done on a task completes it, the next pending task starts, and it is reported", () => {
    const result = ok(sample(), { op: "done", task: "Write tests" });
    expect(result.plan).toEqual(plan({ Build: ["c:Design", "c:Write tests", "i:Refactor"], Release: ["p:Ship"] }));
    expect(result.details.completedTasks).toEqual([{ phase: "Build", content: "Write tests" }]);
  });

  it("drop on a task abandons it and reports nothing completed", () => {
    const result = ok(sample(), { op: "drop", task: "Write tests" });
    expect(result.plan).toEqual(plan({ Build: ["c:Design", "a:Write tests", "i:Refactor"], Release: ["p:Ship"] }));
    expect(result.details.completedTasks).toEqual([]);
  });

  it("targeting rule: done on a phase completes every task of it, an abandoned one included (state table: abandoned → completed)", () => {
    const current = plan({ A: ["c:x", "a:y", "i:z", "p:w"], B: ["p:v"] });
    const result = ok(current, { op: "done", phase: "A" });
    expect(result.plan).toEqual(plan({ A: ["c:x", "c:y", "c:z", "c:w"], B: ["i:v"] }));
    expect(result.details.completedTasks).toEqual([
      { phase: "A", content: "y" },
      { phase: "A", content: "z" },
      { phase: "A", content: "w" },
    ]);
  });

  it("targeting rule: drop on a phase abandons every task of it, a completed one included (state table: completed → abandoned)", () => {
    const result = ok(sample(), { op: "drop", phase: "Build" });
    expect(result.plan).toEqual(plan({ Build: ["a:Design", "a:Write tests", "a:Refactor"], Release: ["i:Ship"] }));
  });

  it("targeting rule: done with neither task nor phase completes every task in every phase", () => {
    const current = plan({ A: ["a:x", "i:y"], B: ["p:z", "c:w"] });
    const result = ok(current, { op: "done" });
    expect(result.plan).toEqual(plan({ A: ["c:x", "c:y"], B: ["c:z", "c:w"] }));
    expect(result.details.completedTasks).toEqual([
      { phase: "A", content: "x" },
      { phase: "A", content: "y" },
      { phase: "B", content: "z" },
    ]);
    expect(result.text).toContain("Every task is completed or dropped.");
  });

  it("targeting rule: drop with neither abandons every task in every phase", () => {
    expect(ok(sample(), { op: "drop" }).plan).toEqual(plan({ Build: ["a:Design", "a:Write tests", "a:Refactor"], Release: ["a:Ship"] }));
  });

  it("task wins over phase, even an unknown phase", () => {
    const result = ok(sample(), { op: "done", task: "Ship", phase: "Nope" });
    expect(result.plan[1]!.tasks[0]!.status).toBe("completed");
    expect(result.plan[0]!.tasks[2]!.status).toBe("pending");
  });

  it("done on a completed task changes nothing and reports nothing", () => {
    const result = ok(sample(), { op: "done", task: "Design" });
    expect(result.plan).toEqual(sample());
    expect(result.details.completedTasks).toEqual([]);
  });

  it("done on a dropped task completes it; drop on a completed task drops it", () => {
    const current = plan({ P: ["a:x", "c:y", "i:z"] });
    expect(ok(current, { op: "done", task: "x" }).plan).toEqual(plan({ P: ["c:x", "c:y", "i:z"] }));
    expect(ok(current, { op: "drop", task: "y" }).plan).toEqual(plan({ P: ["a:x", "a:y", "i:z"] }));
  });

  it("an unknown phase, a blank phase and an unknown task are errors", () => {
    expect(errors(sample(), { op: "done", phase: "Nope" })).toEqual(['Phase "Nope" not found']);
    expect(errors(sample(), { op: "drop", phase: "  " })).toEqual(["Missing phase name"]);
    expect(errors(sample(), { op: "drop", task: "" })).toEqual(["Missing task content"]);
    expect(errors(sample(), { op: "done", task: "Nope" })).toEqual(['Task "Nope" not found']);
  });
});

describe("phases: rm", () => {
  it("rm a task removes it; removing the task in progress starts the next", () => {
    const result = ok(sample(), { op: "rm", task: "Write tests" });
    expect(result.plan).toEqual(plan({ Build: ["c:Design", "i:Refactor"], Release: ["p:Ship"] }));
  });

  it("rm a phase empties it and keeps it", () => {
    const result = ok(sample(), { op: "rm", phase: "Build" });
    expect(result.plan).toEqual([{ name: "Build", tasks: [] }, ...plan({ Release: ["i:Ship"] })]);
    expect(result.text).toContain("Build (0/0 completed)");
  });

  it("targeting rule: rm alone clears every phase's task list and keeps the phases", () => {
    const result = ok(sample(), { op: "rm" });
    const emptied = [
      { name: "Build", tasks: [] },
      { name: "Release", tasks: [] },
    ];
    expect(result).toMatchObject({ plan: emptied, changed: true, text: "Todo list cleared.", details: { phases: emptied, completedTasks: [] } });
  });

  it("removing the last task keeps its phase, and append builds on it", () => {
    const result = ok(plan({ P: ["i:a"] }), { op: "rm", task: "a" });
    expect(result.text).toBe("Todo list cleared.");
    expect(result.plan).toEqual([{ name: "P", tasks: [] }]);
    expect(ok(result.plan, { op: "append", phase: "P", items: ["b"] }).plan).toEqual(plan({ P: ["i:b"] }));
  });

  it("task wins over phase; unknown targets are errors", () => {
    expect(ok(sample(), { op: "rm", task: "Ship", phase: "Build" }).plan).toEqual(plan({ Build: ["c:Design", "i:Write tests", "p:Refactor"], Release: [] }));
    expect(errors(sample(), { op: "rm", phase: "Nope" })).toEqual(['Phase "Nope" not found']);
    expect(errors(sample(), { op: "rm", task: "Nope" })).toEqual(['Task "Nope" not found']);
  });

  it("rm on an empty list: a task is not found (with the hint), everything is cleared", () => {
    expect(errors([], { op: "rm", task: "x" })).toEqual(['Task "x" not found (the todo list is empty; create it with init)']);
    expect(ok([], { op: "rm" }).text).toBe("Todo list cleared.");
  });
});

describe("phases: append", () => {
  it("adds pending tasks at the end of an existing phase", () => {
    const result = ok(sample(), { op: "append", phase: "Build", items: ["Docs", "Bench"] });
    expect(result.plan).toEqual(plan({ Build: ["c:Design", "i:Write tests", "p:Refactor", "p:Docs", "p:Bench"], Release: ["p:Ship"] }));
  });

  it("creates a missing phase, last", () => {
    expect(ok(sample(), { op: "append", phase: "Later", items: ["x"] }).plan.map((p) => p.name)).toEqual(["Build", "Release", "Later"]);
  });

  it("appending to a finished plan starts the first new task", () => {
    expect(ok(plan({ P: ["c:a"] }), { op: "append", phase: "P", items: ["b", "c"] }).plan).toEqual(plan({ P: ["c:a", "i:b", "p:c"] }));
  });

  it("appending to an empty list creates it", () => {
    expect(ok([], { op: "append", phase: "P", items: ["a"] }).plan).toEqual(plan({ P: ["i:a"] }));
  });

  it("content that exists anywhere or repeats in the batch is refused once per duplicate; nothing is appended", () => {
    expect(errors(sample(), { op: "append", phase: "Release", items: ["New", "Design", "x", "x", "x", "Ship"] })).toEqual([
      'Task "Design" already exists',
      'Task "x" already exists',
      'Task "Ship" already exists',
    ]);
  });

  it("duplicates are found after cleaning", () => {
    expect(errors(sample(), { op: "append", phase: "Release", items: [" Ship\n"] })).toEqual(['Task "Ship" already exists']);
  });

  it("missing phase and items are both reported", () => {
    expect(errors(sample(), { op: "append" })).toEqual(["Missing phase name for append operation", "Missing items for append operation"]);
    expect(errors(sample(), { op: "append", phase: " ", items: ["x"] })).toEqual(["Missing phase name for append operation"]);
    expect(errors(sample(), { op: "append", phase: "P", items: [] })).toEqual(["Missing items for append operation"]);
    expect(errors(sample(), { op: "append", phase: "P", items: ["ok", " "] })).toEqual(["Missing task content"]);
  });

  it("the plan never grows past 100 tasks", () => {
    const full = ok([], { op: "init", items: Array.from({ length: 99 }, (_, i) => `t${i}`) }).plan;
    expect(ok(full, { op: "append", phase: "Tasks", items: ["one more"] }).plan[0]!.tasks).toHaveLength(100);
    expect(errors(full, { op: "append", phase: "More", items: ["a", "b"] })).toEqual(["A plan holds at most 100 tasks"]);
  });
});

describe("phases: view", () => {
  it("of nothing says the list is empty and changes nothing", () => {
    expect(ok([], { op: "view" })).toEqual({
      ok: true,
      plan: [],
      changed: false,
      text: "Todo list is empty.",
      details: { phases: [], completedTasks: [] },
    });
  });

  it("shows the list as stored, without normalising it", () => {
    const current = plan({ P: ["i:a", "i:b", "p:c"] });
    const result = ok(current, { op: "view" });
    expect(result.plan).toBe(current);
    expect(result.changed).toBe(false);
    expect(result.text).toContain('- b (in_progress, phase "P")');
  });
});

describe("phases: normalisation", () => {
  it("keeps only the first task in progress", () => {
    expect(normalisePhases(plan({ A: ["p:a", "i:b"], B: ["i:c", "i:d"] }))).toEqual(plan({ A: ["p:a", "i:b"], B: ["p:c", "p:d"] }));
  });

  it("with none in progress, starts the first pending task in phase order", () => {
    expect(normalisePhases(plan({ A: ["c:a", "a:b"], B: ["c:c", "p:d", "p:e"] }))).toEqual(plan({ A: ["c:a", "a:b"], B: ["c:c", "i:d", "p:e"] }));
  });

  it("leaves a finished plan alone and keeps phases that have no task", () => {
    const finished = plan({ A: ["c:a", "a:b"] });
    expect(normalisePhases(finished)).toEqual(finished);
    expect(normalisePhases([{ name: "A", tasks: [] }])).toEqual([{ name: "A", tasks: [] }]);
  });

  it("runs after every change: drop then the next task starts", () => {
    const result = ok(plan({ P: ["i:a", "i:b", "p:c"] }), { op: "drop", task: "c" });
    expect(result.plan).toEqual(plan({ P: ["i:a", "p:b", "a:c"] }));
  });
});

describe("phases: atomic ops and pure functions", () => {
  it("the input plan is never changed, by a failing or a succeeding op", () => {
    const current = sample();
    const snapshot = structuredClone(current);
    ok(current, { op: "done" });
    ok(current, { op: "append", phase: "Build", items: ["z"] });
    errors(current, { op: "append", phase: "Build", items: ["z", "Ship"] });
    expect(current).toEqual(snapshot);
  });

  it("one bad item in a batch fails the whole op", () => {
    expect(applyPhaseOp(sample(), { op: "append", phase: "Build", items: ["fine", "Design"] }).ok).toBe(false);
  });

  it("works on frozen plans", () => {
    const frozen = Object.freeze(sample().map((p) => Object.freeze({ ...p, tasks: Object.freeze(p.tasks.map((t) => Object.freeze({ ...t }))) })));
    expect(ok(frozen, { op: "done" }).plan[1]!.tasks[0]!.status).toBe("completed");
  });

  it("the error text is Errors: and every message joined with ;", () => {
    expect(formatErrors(["a", "b c"])).toBe("Errors: a; b c");
  });
});

describe("phases: success text", () => {
  it("lists the remaining tasks, the current phase's progress and a tree of all phases", () => {
    const current = plan({ Build: ["c:Design", "i:Write tests", "a:Benchmark", "p:Refactor"], Release: ["p:Ship"] });
    expect(ok(current, { op: "append", phase: "Release", items: ["Announce"] }).text).toBe(
      [
        "Remaining tasks:",
        '- Write tests (in_progress, phase "Build")',
        '- Refactor (pending, phase "Build")',
        '- Ship (pending, phase "Release")',
        '- Announce (pending, phase "Release")',
        'Current phase "Build": 1/4 completed, 1 dropped',
        "Plan:",
        "Build (1/4 completed, 1 dropped)",
        "  [x] Design",
        "  [/] Write tests",
        "  [-] Benchmark",
        "  [ ] Refactor",
        "Release (0/2 completed)",
        "  [ ] Ship",
        "  [ ] Announce",
      ].join("\n"),
    );
  });

  it("says when nothing is left open", () => {
    const text = ok(plan({ A: ["i:a"] }), { op: "done" }).text;
    expect(text).toBe(["Remaining tasks: none", "Every task is completed or dropped.", "Plan:", "A (1/1 completed)", "  [x] a"].join("\n"));
  });

  it("the current phase follows the task in progress", () => {
    expect(ok(sample(), { op: "start", task: "Ship" }).text).toContain('Current phase "Release": 0/1 completed');
  });
});

describe("phases: cleanText", () => {
  it.each([
    ["  a  ", "a"],
    ["a\nb", "a b"],
    ["a \r\n\r\n b", "a b"],
    ["a\u0085b", "a b"],
    ["a\tb", "a\tb"],
    ["[x] # <!-- -->", "[x] # <!-- -->"],
  ])("%j → %j", (input, output) => {
    expect(cleanText(input)).toBe(output);
  });
});
