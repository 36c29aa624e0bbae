/**
 * A phased plan as Markdown, for people to read and edit (`/todo`).
 *
 *     # Build
 *     - [x] Design
 *     - [/] Write tests
 *
 *     # Release
 *     - [ ] Ship
 *
 * Rendering: one `# <phase>` heading per phase (a blank line between
 * phases), then one `- [m] <task>` line per task with `[ ]` pending, `[/]`
 * in progress, `[x]` completed and `[-]` abandoned; a phase with no task is
 * its heading alone. A plan with no phase is `# Todos`.
 *
 * Parsing accepts more than it writes: headings `#` to `######` (a space
 * after the hashes, as in CommonMark; trailing `#`s are part of the name),
 * bullets `-`, `*` or `+`, indentation, CRLF or CR line ends, blank lines,
 * and the markers `[X]` (completed), `[>]` (in progress), `[~]` (abandoned),
 * `[]` (pending) and escaped forms such as `\[x\]`. Tasks before any heading go
 * to a phase `Todos`. Text is cleaned as the tool cleans it (trimmed).
 * Every other line, unknown marker, duplicate or limit breach gives a
 * `Line N: ...` error; callers must not use `phases` when there are errors.
 * A heading with no task is a phase with no task; a document with no
 * heading and no task parses to the empty plan `[]`.
 *
 * What round-trips: every plan the tool can hold (normalised, clean text,
 * unique names within limits) renders and parses back to the same plan. The
 * parser does not normalise: it returns the statuses as written, so a
 * caller replacing a plan should normalise the result itself.
 */
import { STATUS_MARKERS, classifyLine, splitLines } from "../markdown.js";
import { cleanText, utf8Length } from "../text.js";
import { MAX_PHASES, MAX_PHASE_NAME_BYTES, MAX_TASKS, MAX_TASK_BYTES, type Phase, type PhasePlan, type Task } from "./plan.js";

export const IMPLICIT_PHASE = "Todos";

/** The plan as Markdown (`# Todos` when it has no phase); a phase with no task is its heading alone. */
export function renderPhasesMarkdown(phases: PhasePlan): string {
  if (phases.length === 0) return `# ${IMPLICIT_PHASE}`;
  return phases.map((phase) => [`# ${phase.name}`, ...phase.tasks.map((task) => `- ${STATUS_MARKERS[task.status]} ${task.content}`)].join("\n")).join("\n\n");
}

/** Reads a plan back from Markdown; `errors` lists every bad line as `Line N: ...`. */
export function parsePhasesMarkdown(text: string): { phases: Phase[]; errors: string[] } {
  const phases: { name: string; tasks: Task[] }[] = [];
  const names = new Set<string>();
  const contents = new Set<string>();
  const errors: string[] = [];
  let current: { name: string; tasks: Task[] } | undefined;
  let tasks = 0;

  const addPhase = (name: string, n: number): void => {
    current = { name, tasks: [] };
    if (names.has(name)) errors.push(`Line ${n}: duplicate phase "${name}"`);
    else if (phases.length === MAX_PHASES) errors.push(`Line ${n}: more than ${MAX_PHASES} phases`);
    names.add(name);
    phases.push(current);
  };

  for (const [i, raw] of splitLines(text).entries()) {
    const n = i + 1;
    const line = classifyLine(raw);
    if (line.kind === "blank") continue;
    if (line.kind === "error") {
      errors.push(`Line ${n}: ${line.message}`);
    } else if (line.kind === "heading") {
      const name = cleanText(line.text);
      if (!name) errors.push(`Line ${n}: a heading needs a phase name`);
      else if (utf8Length(name) > MAX_PHASE_NAME_BYTES) errors.push(`Line ${n}: phase name is longer than ${MAX_PHASE_NAME_BYTES} bytes`);
      addPhase(name, n);
    } else {
      const content = cleanText(line.rest);
      if (!content) errors.push(`Line ${n}: a task needs text`);
      else if (utf8Length(content) > MAX_TASK_BYTES) errors.push(`Line ${n}: task is longer than ${MAX_TASK_BYTES} bytes`);
      else if (contents.has(content)) errors.push(`Line ${n}: duplicate task "${content}"`);
      else if (++tasks === MAX_TASKS + 1) errors.push(`Line ${n}: more than ${MAX_TASKS} tasks`);
      contents.add(content);
      if (!current) addPhase(IMPLICIT_PHASE, n);
      current!.tasks.push({ content, status: line.status });
    }
  }
  return { phases, errors };
}
