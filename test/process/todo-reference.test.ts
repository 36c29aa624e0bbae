/**
 * The phases tool against its reference, oh-my-pi's todo tool (built from
 * its published package by test/support/omp-reference.ts): the same
 * generated op sequences go through both, and their plans, completed tasks,
 * error-or-not and Markdown must agree. The differences README lists under
 * "Differences from PicoClaw and oh-my-pi" are the only ones allowed; the
 * last block shows each of them, so the list stays true.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { parsePhaseArgs } from "../../src/features/todo/phases/args.js";
import { parsePhasesMarkdown, renderPhasesMarkdown } from "../../src/features/todo/phases/markdown.js";
import { applyPhaseOp } from "../../src/features/todo/phases/ops.js";
import { type PhasePlan, normalisePhases } from "../../src/features/todo/phases/plan.js";
import { type RefPhase, type Reference, loadReference } from "../support/omp-reference.js";

let ref: Reference;
beforeAll(async () => {
  ref = await loadReference();
}, 120_000);

const TASKS = ["Design", "Write tests", "Refactor", "Ship", "Docs", "Fix bug #2"];
const PHASES = ["Build", "Release", "Later"];
const task = fc.constantFrom(...TASKS);
const phase = fc.constantFrom(...PHASES);
const items = (min: number) => fc.array(task, { minLength: min, maxLength: 3 });

/** Ops of the shapes both tools accept, within what README lists as our own rules (no blank texts, no list with items, no empty list). */
const op: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ op: fc.constant("init"), list: fc.array(fc.record({ phase, items: items(1) }), { minLength: 1, maxLength: 3 }) }),
  fc.record({ op: fc.constant("init"), items: items(0), phase }, { requiredKeys: ["op", "items"] }),
  fc.record({ op: fc.constant("start"), task }),
  ...(["done", "drop", "rm"] as const).map((name) => fc.record({ op: fc.constant(name), task, phase }, { requiredKeys: ["op"] })),
  fc.record({ op: fc.constant("append"), phase, items: items(0) }),
  fc.constant({ op: "view" }),
);

/** Our tool's path for one call: the argument check, then the op; a failed op leaves the plan. */
function ours(plan: PhasePlan, args: Record<string, unknown>): { plan: PhasePlan; isError: boolean; completed: unknown[] } {
  const parsed = parsePhaseArgs(args);
  if (!parsed.ok) return { plan, isError: true, completed: [] };
  const result = applyPhaseOp(plan, parsed.input);
  return result.ok ? { plan: result.plan, isError: false, completed: result.details.completedTasks } : { plan, isError: true, completed: [] };
}

const asRef = (plan: PhasePlan): RefPhase[] => plan.map((p) => ({ name: p.name, tasks: p.tasks.map((t) => ({ content: t.content, status: t.status })) }));

describe("the phases tool against oh-my-pi's todo tool", () => {
  it("the same op sequences give the same plans, completed tasks and errors", async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        let mine: PhasePlan = [];
        let theirs: RefPhase[] = [];
        for (const args of ops) {
          const step = ours(mine, args);
          const { result, held } = await ref.run(theirs, args);
          cases++;
          expect({ isError: step.isError, plan: asRef(step.plan) }, JSON.stringify(args)).toEqual({ isError: result.isError === true, plan: held });
          expect(step.completed, JSON.stringify(args)).toEqual(result.details.completedTasks ?? []);
          mine = step.plan;
          theirs = held;
        }
      }),
      { numRuns: 600 },
    );
    expect(cases).toBeGreaterThan(3000);
  });

  it("Markdown: each reads what the other writes, for every plan the ops reach", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (ops) => {
        let plan: PhasePlan = [];
        for (const args of ops) plan = ours(plan, args).plan;
        // The reference normalises what it parses; our /todo edit normalises the parse too.
        const theirsReadsOurs = ref.markdownToPhases(renderPhasesMarkdown(plan));
        expect(theirsReadsOurs.errors).toEqual([]);
        const oursReadsTheirs = parsePhasesMarkdown(ref.phasesToMarkdown(asRef(plan)));
        expect(oursReadsTheirs.errors).toEqual([]);
        expect(asRef(normalisePhases(oursReadsTheirs.phases))).toEqual(theirsReadsOurs.phases);
        const expected = plan.length === 0 ? [{ name: "Todos", tasks: [] }] : asRef(plan);
        expect(theirsReadsOurs.phases).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe("the documented differences, each shown against the reference", () => {
  const built = [
    {
      name: "Build",
      tasks: [
        { content: "Design", status: "in_progress" as const },
        { content: "Ship", status: "pending" as const },
      ],
    },
  ];

  it("an empty-string target is refused; the reference reads it as no target and changes every task", async () => {
    const theirs = await ref.run(built, { op: "done", task: "" });
    expect(theirs.held[0]!.tasks.map((t) => t.status)).toEqual(["completed", "completed"]);
    expect(ours(built, { op: "done", task: "" })).toMatchObject({ isError: true, plan: built });
  });

  it("targets and names are trimmed (and line breaks folded); the reference matches them exactly", async () => {
    expect((await ref.run(built, { op: "done", task: " Ship " })).result.isError).toBe(true);
    expect(ours(built, { op: "done", task: " Ship " }).isError).toBe(false);
  });

  it("init with both list and items is refused; the reference takes the list", async () => {
    const args = { op: "init", list: [{ phase: "A", items: ["x"] }], items: ["y"] };
    expect((await ref.run([], args)).held).toEqual([{ name: "A", tasks: [{ content: "x", status: "in_progress" }] }]);
    expect(ours([], args).isError).toBe(true);
  });

  it("init with an empty list is refused; the reference clears the plan", async () => {
    expect((await ref.run(built, { op: "init", list: [] })).held).toEqual([]);
    expect(ours(built, { op: "init", list: [] })).toMatchObject({ isError: true, plan: built });
  });

  it("a blank phase name or task text is refused; the reference stores it", async () => {
    expect((await ref.run([], { op: "append", phase: "A", items: [" "] })).result.isError).toBeUndefined();
    expect(ours([], { op: "append", phase: "A", items: [" "] }).isError).toBe(true);
  });

  it("an unknown field is refused; the reference ignores it", async () => {
    expect((await ref.run(built, { op: "view", extra: 1 })).result.isError).toBeUndefined();
    expect(ours(built, { op: "view", extra: 1 }).isError).toBe(true);
  });

  it("Markdown: written without a trailing newline; the reference ends with one", () => {
    expect(ref.phasesToMarkdown(built)).toBe(`${renderPhasesMarkdown(built)}\n`);
  });

  it("Markdown: a bare CR ends a line, -[ ] (no space) and [!] are refused; the reference differs on each", () => {
    expect(parsePhasesMarkdown("# A\r- [ ] x").phases).toEqual([{ name: "A", tasks: [{ content: "x", status: "pending" }] }]);
    expect(ref.markdownToPhases("# A\r- [ ] x")).toEqual({ phases: [], errors: ['Line 1: unrecognized syntax "# A\r- [ ] x"'] });
    expect(parsePhasesMarkdown("-[ ] x").errors).toHaveLength(1);
    expect(ref.markdownToPhases("-[ ] x").errors).toEqual([]);
    expect(parsePhasesMarkdown("- [!] x").errors).toHaveLength(1);
    expect(ref.markdownToPhases("- [!] x").phases[0]!.tasks[0]!.status).toBe("blocked");
  });

  it("append with neither phase nor items names both errors; the reference names the phase only", async () => {
    expect((await ref.run(built, { op: "append" })).result.content[0]!.text).toMatch(/^Errors: Missing phase name for append operation$/m);
    const parsed = parsePhaseArgs({ op: "append" });
    const applied = parsed.ok ? applyPhaseOp(built, parsed.input) : undefined;
    expect(applied).toEqual({ ok: false, errors: ["Missing phase name for append operation", "Missing items for append operation"] });
  });

  it("Markdown: errors say what is wrong with the line (a task with no text, a heading with no name, no marker); the reference says unrecognized syntax", () => {
    const cases: [string, string, string][] = [
      ["# A\n- [ ]", "Line 2: a task needs text", 'Line 2: unrecognized syntax "- [ ]"'],
      ["#\n- [ ] x", "Line 1: a heading needs a phase name", 'Line 1: unrecognized syntax "#"'],
      ["# A\n- x", 'Line 2: a task needs a status marker, like "- [ ] task"', 'Line 2: unrecognized syntax "- x"'],
      ["# A\nfoo", 'Line 2: expected a "# phase" heading or a "- [ ] task" line', 'Line 2: unrecognized syntax "foo"'],
      ["- [?] x", 'Line 1: unknown status marker "[?]"; use [ ], [/], [x] or [-]', 'Line 1: unknown status marker "[?]" (use [ ], [x], [/], [-], [!])'],
    ];
    for (const [markdown, mine, theirs] of cases) {
      expect(parsePhasesMarkdown(markdown).errors, markdown).toEqual([mine]);
      expect(ref.markdownToPhases(markdown).errors, markdown).toEqual([theirs]);
    }
  });

  it("Markdown: a duplicate task or phase is an error line; the reference keeps both", () => {
    expect(parsePhasesMarkdown("# A\n- [ ] x\n- [ ] x").errors).toEqual(['Line 3: duplicate task "x"']);
    expect(ref.markdownToPhases("# A\n- [ ] x\n- [ ] x").phases[0]!.tasks).toHaveLength(2);
  });
});
