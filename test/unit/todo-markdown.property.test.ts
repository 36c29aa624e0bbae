/**
 * Property: rendering a plan as Markdown and parsing it back gives the same
 * plan and no errors, for both styles.
 *
 * Generated text is deliberately hostile: unicode graphemes and raw code
 * points, markers (`[x]`, `\[ \]`), hashes, bullets, HTML comment
 * delimiters, JSON quotes and backslashes, outer spaces, tabs and every kind
 * of line break.
 *
 * - Phases: the generator cleans its text with `cleanText`, drops blanks and
 *   duplicates and normalises, i.e. it builds exactly the plans the tool can
 *   hold, because the tool cleans every content and name on the way in. The
 *   renderer needs no escaping: the parser takes everything after a task's
 *   marker (or a heading's hashes) as text, and that text is one trimmed line.
 *   A second property reaches plans through random op sequences instead.
 * - List: the generator keeps raw text (the list tool stores it verbatim) and
 *   only keeps lists the tool's own validator accepts; the renderer carries
 *   whatever the visible line cannot show in its JSON comment.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseListMarkdown, renderListMarkdown } from "../../src/features/todo/list/markdown.js";
import { parsePhasesMarkdown, renderPhasesMarkdown } from "../../src/features/todo/phases/markdown.js";
import { applyPhaseOp } from "../../src/features/todo/phases/ops.js";
import {
  MAX_PHASE_NAME_BYTES,
  MAX_TASK_BYTES,
  PHASE_OPS,
  type Phase,
  type PhaseOpInput,
  type PhasePlan,
  normalisePhases,
} from "../../src/features/todo/phases/plan.js";
import { TASK_STATUSES } from "../../src/features/todo/markdown.js";
import { cleanText } from "../../src/features/todo/text.js";
import { TODO_PRIORITIES, TODO_STATUSES, validateTodoArgs } from "../../src/features/todo/list/validate.js";
import { utf8Length } from "../../src/features/todo/text.js";

const FRAGMENTS = [
  "[x]",
  "[ ]",
  "[/]",
  "[-]",
  "[]",
  "\\[x\\]",
  "[?]",
  "#",
  "## ",
  "- ",
  "* ",
  "+ ",
  "<!--",
  "-->",
  '<!-- {"id":"1"} -->',
  "{",
  "}",
  '"',
  "\\",
  "\\n",
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "\u2028",
  "\u0085",
  "\u00a0",
  "\u3000",
  "\u200b",
  "😀",
  "é",
  "e\u0301",
  "中文",
  "Ship",
  "fix bug",
  "v1.2",
];

const text = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: "grapheme", maxLength: 6 }), fc.string({ unit: "binary", maxLength: 4 })), {
    maxLength: 8,
  })
  .map((parts) => parts.join(""));

const rawPlan = fc.array(
  fc.record({ name: text, tasks: fc.array(fc.record({ content: text, status: fc.constantFrom(...TASK_STATUSES) }), { maxLength: 6 }) }),
  { maxLength: 5 },
);

/** Only what the tool can hold: clean unique text within limits, normalised. */
function holdable(raw: { name: string; tasks: { content: string; status: Phase["tasks"][number]["status"] }[] }[]): PhasePlan {
  const names = new Set<string>();
  const contents = new Set<string>();
  const phases: Phase[] = [];
  for (const phase of raw) {
    const name = cleanText(phase.name);
    if (!name || names.has(name) || utf8Length(name) > MAX_PHASE_NAME_BYTES) continue;
    names.add(name);
    const tasks = phase.tasks
      .map((t) => ({ content: cleanText(t.content), status: t.status }))
      .filter((t) => t.content && utf8Length(t.content) <= MAX_TASK_BYTES && !contents.has(t.content) && contents.add(t.content));
    phases.push({ name, tasks });
  }
  return normalisePhases(phases);
}

/** Render then parse gives the plan back; a plan with no phase renders `# Todos`, which reads back as that one empty phase (as in the reference). */
function roundTripsPhases(plan: PhasePlan): void {
  const markdown = renderPhasesMarkdown(plan);
  const back = parsePhasesMarkdown(markdown);
  expect(back.errors).toEqual([]);
  expect(back.phases).toEqual(plan.length === 0 ? [{ name: "Todos", tasks: [] }] : plan);
}

describe("markdown round trip (property)", () => {
  it("phases: any plan the tool can hold renders and parses back to itself", () => {
    fc.assert(fc.property(rawPlan.map(holdable), roundTripsPhases), { numRuns: 500 });
  });

  it("phases: any plan reached by a sequence of ops renders and parses back to itself", () => {
    const names = fc.constantFrom("Build", " Build\n", "Ship #1", "[x] Later");
    const pick = fc.oneof(text, fc.constantFrom("Design", "Test", " Test ", "task-3"));
    const op: fc.Arbitrary<PhaseOpInput> = fc.record(
      {
        op: fc.constantFrom(...PHASE_OPS),
        task: pick,
        phase: fc.oneof(names, text),
        items: fc.array(fc.oneof(pick, text), { maxLength: 4 }),
        list: fc.array(fc.record({ phase: fc.oneof(names, text), items: fc.array(fc.oneof(pick, text), { minLength: 1, maxLength: 3 }) }), { maxLength: 3 }),
      },
      { requiredKeys: ["op"] },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 12 }), (ops) => {
        let plan: PhasePlan = [];
        for (const input of ops) {
          const result = applyPhaseOp(plan, input);
          if (result.ok) plan = result.plan;
        }
        roundTripsPhases(plan);
      }),
      { numRuns: 300 },
    );
  });

  it("list: any list the list tool accepts renders and parses back to itself, exactly", () => {
    const item = fc.record({
      id: text,
      content: text,
      status: fc.constantFrom(...TODO_STATUSES),
      priority: fc.constantFrom(...TODO_PRIORITIES),
    });
    const accepted = fc.uniqueArray(item, { selector: (i) => i.id, maxLength: 10 }).map((todos) => {
      const ok = todos.filter((t) => !("error" in validateTodoArgs({ action: "write", todos: [t] }, { agentId: "a", sessionKey: "s" })));
      const request = validateTodoArgs({ action: "write", todos: ok }, { agentId: "a", sessionKey: "s" });
      if ("error" in request || request.action !== "write") throw new Error(`generator built an invalid list: ${JSON.stringify(request)}`);
      return request.todos;
    });
    fc.assert(
      fc.property(accepted, (items) => {
        const back = parseListMarkdown(renderListMarkdown(items), items);
        expect(back.errors).toEqual([]);
        expect(back.items).toEqual(items);
      }),
      { numRuns: 500 },
    );
  });
});
