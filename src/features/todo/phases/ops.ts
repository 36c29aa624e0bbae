/**
 * The ops of the phases tool, each a pure function from the current plan to
 * a new one or to the errors that stopped it (the input is never changed).
 *
 * As the reference (oh-my-pi's todo tool) does:
 * - `done`/`drop` set the status of every task they target, whatever it
 *   was: one task, every task of a phase, or every task (a completed task
 *   dropped becomes abandoned, an abandoned one done becomes completed).
 * - `rm` removes one task, empties a phase, or empties every phase; phases
 *   stay, even with no task left.
 * - `start` on a completed or dropped task reopens it as in progress.
 * - `task` wins over `phase` when both are given.
 * - `done` on the task in progress moves "in progress" on to the next
 *   pending task (normalisation), so the model rarely needs `start`.
 *
 * Where this differs on purpose (README, "Differences from PicoClaw and
 * oh-my-pi"): a present but blank `task` or `phase` is an error (`Missing
 * task content` / `Missing phase name`), never "no target", so `rm
 * {phase: ""}` cannot empty the whole plan; `init` takes `list` or `items`,
 * not both, and every list entry needs a phase name and an item; each
 * duplicate is reported once, however often it repeats; blank texts and the
 * size limits are refused.
 */
import { describePlan } from "./summary.js";
import {
  CLEARED_TEXT,
  type CompletedTask,
  DEFAULT_PHASE,
  EMPTY_TEXT,
  MAX_PHASES,
  MAX_PHASE_NAME_BYTES,
  MAX_TASKS,
  MAX_TASK_BYTES,
  PHASE_ERRORS,
  type Phase,
  type PhaseOpInput,
  type PhaseOpResult,
  type PhasePlan,
  type Task,
  normalisePhases,
  taskCount,
} from "./plan.js";
import { cleanText, utf8Length } from "../text.js";

const ID_LIKE = /^(?:#|(?:task|todo|item|step|t)[-_ #]?)?\d+$/i;

/** `Task "T" not found`, with a hint for the two usual mistakes. */
export function taskNotFound(task: string, plan: PhasePlan): string {
  const base = `Task "${task}" not found`;
  if (taskCount(plan) === 0) return `${base} (the todo list is empty; create it with init)`;
  if (ID_LIKE.test(task)) return `${base} (tasks are named by their exact content, not by ids or numbers)`;
  return base;
}

type Lookup<T> = { found: T } | { error: string };

function findTask(plan: PhasePlan, raw: string): Lookup<{ phase: number; task: number }> {
  const content = cleanText(raw);
  if (!content) return { error: PHASE_ERRORS.missingTask };
  for (const [p, phase] of plan.entries()) {
    const t = phase.tasks.findIndex((task) => task.content === content);
    if (t >= 0) return { found: { phase: p, task: t } };
  }
  return { error: taskNotFound(content, plan) };
}

function findPhase(plan: PhasePlan, raw: string): Lookup<number> {
  const name = cleanText(raw);
  if (!name) return { error: PHASE_ERRORS.missingPhase };
  const index = plan.findIndex((phase) => phase.name === name);
  return index >= 0 ? { found: index } : { error: `Phase "${name}" not found` };
}

/** Which tasks an op aims at: one task, one phase's tasks, or every task. */
type Target = { kind: "task"; phase: number; task: number } | { kind: "phase"; phase: number } | { kind: "all" };

function findTarget(plan: PhasePlan, input: PhaseOpInput): Lookup<Target> {
  if (input.task !== undefined) {
    const hit = findTask(plan, input.task);
    return "error" in hit ? hit : { found: { kind: "task", ...hit.found } };
  }
  if (input.phase !== undefined) {
    const hit = findPhase(plan, input.phase);
    return "error" in hit ? hit : { found: { kind: "phase", phase: hit.found } };
  }
  return { found: { kind: "all" } };
}

const hits = (target: Target, p: number, t: number): boolean => target.kind === "all" || (target.phase === p && (target.kind === "phase" || target.task === t));

type Change = { plan: PhasePlan } | { errors: string[] };

/** Checks a batch of new task contents: cleaned, non-blank, within limits, not already present. */
function checkNewTasks(
  raw: readonly string[],
  existing: ReadonlySet<string>,
  duplicate: (content: string) => string,
): { contents: string[]; errors: string[] } {
  const contents: string[] = [];
  const errors = new Set<string>();
  const seen = new Set(existing);
  for (const item of raw) {
    const content = cleanText(item);
    if (!content) errors.add(PHASE_ERRORS.missingTask);
    else if (utf8Length(content) > MAX_TASK_BYTES) errors.add(PHASE_ERRORS.taskTooLong);
    else if (seen.has(content)) errors.add(duplicate(content));
    seen.add(content);
    contents.push(content);
  }
  return { contents, errors: [...errors] };
}

function checkPhaseName(raw: string | undefined, missing: string): { name: string } | { error: string } {
  const name = cleanText(raw ?? "");
  if (!name) return { error: missing };
  if (utf8Length(name) > MAX_PHASE_NAME_BYTES) return { error: PHASE_ERRORS.phaseTooLong };
  return { name };
}

function checkSize(plan: PhasePlan): string[] {
  return [...(taskCount(plan) > MAX_TASKS ? [PHASE_ERRORS.tooManyTasks] : []), ...(plan.length > MAX_PHASES ? [PHASE_ERRORS.tooManyPhases] : [])];
}

function init(input: PhaseOpInput): Change {
  const hasList = (input.list?.length ?? 0) > 0;
  const hasItems = (input.items?.length ?? 0) > 0;
  if (hasList && hasItems) return { errors: [PHASE_ERRORS.listAndItems] };
  if (!hasList && !hasItems) return { errors: [PHASE_ERRORS.missingList] };
  const entries = hasList ? input.list! : [{ phase: input.phase ?? DEFAULT_PHASE, items: input.items }];
  const errors = new Set<string>();
  const plan: Phase[] = [];
  const names = new Set<string>();
  const contents = new Set<string>();
  for (const entry of entries) {
    const phase = checkPhaseName(entry.phase, hasList ? `${PHASE_ERRORS.missingPhase} in init list` : PHASE_ERRORS.missingPhase);
    if ("error" in phase) errors.add(phase.error);
    else if (names.has(phase.name)) errors.add(`Duplicate phase "${phase.name}" in init list`);
    const name = "name" in phase ? phase.name : "";
    names.add(name);
    if (!entry.items?.length) errors.add(name ? `Missing items for phase "${name}" in init list` : "Missing items in init list");
    const batch = checkNewTasks(entry.items ?? [], contents, (c) => `Duplicate task "${c}" in init list`);
    for (const error of batch.errors) errors.add(error);
    for (const content of batch.contents) contents.add(content);
    plan.push({ name, tasks: batch.contents.map((content) => ({ content, status: "pending" })) });
  }
  const all = [...errors, ...checkSize(plan)];
  return all.length ? { errors: all } : { plan };
}

function setStatus(plan: PhasePlan, input: PhaseOpInput, status: "completed" | "abandoned"): Change {
  const target = findTarget(plan, input);
  if ("error" in target) return { errors: [target.error] };
  const t = target.found;
  return {
    plan: plan.map((phase, p) => ({
      name: phase.name,
      tasks: phase.tasks.map((task, i) => (hits(t, p, i) ? { content: task.content, status } : task)),
    })),
  };
}

function start(plan: PhasePlan, input: PhaseOpInput): Change {
  const hit = findTask(plan, input.task ?? "");
  if ("error" in hit) return { errors: [hit.error] };
  const { phase: p, task: t } = hit.found;
  return {
    plan: plan.map((phase, pi) => ({
      name: phase.name,
      tasks: phase.tasks.map((task, ti): Task => {
        if (pi === p && ti === t) return { content: task.content, status: "in_progress" };
        return task.status === "in_progress" ? { content: task.content, status: "pending" } : task;
      }),
    })),
  };
}

function remove(plan: PhasePlan, input: PhaseOpInput): Change {
  const target = findTarget(plan, input);
  if ("error" in target) return { errors: [target.error] };
  const t = target.found;
  return { plan: plan.map((phase, p) => ({ name: phase.name, tasks: phase.tasks.filter((_, i) => !hits(t, p, i)) })) };
}

function append(plan: PhasePlan, input: PhaseOpInput): Change {
  const phase = checkPhaseName(input.phase, PHASE_ERRORS.appendPhase);
  const errors: string[] = "error" in phase ? [phase.error] : [];
  if (!input.items?.length) errors.push(PHASE_ERRORS.appendItems);
  if (errors.length || !("name" in phase)) return { errors };
  const existing = new Set(plan.flatMap((p) => p.tasks.map((t) => t.content)));
  const batch = checkNewTasks(input.items!, existing, (c) => `Task "${c}" already exists`);
  if (batch.errors.length) return { errors: batch.errors };
  const added = batch.contents.map((content): Task => ({ content, status: "pending" }));
  const next = plan.some((p) => p.name === phase.name)
    ? plan.map((p) => (p.name === phase.name ? { name: p.name, tasks: [...p.tasks, ...added] } : p))
    : [...plan, { name: phase.name, tasks: added }];
  const size = checkSize(next);
  return size.length ? { errors: size } : { plan: next };
}

/** Tasks completed in `after` that were not completed in `before` (matched by content). */
export function newlyCompleted(before: PhasePlan, after: PhasePlan): CompletedTask[] {
  const done = new Set(before.flatMap((p) => p.tasks.filter((t) => t.status === "completed").map((t) => t.content)));
  return after.flatMap((phase) =>
    phase.tasks.filter((t) => t.status === "completed" && !done.has(t.content)).map((t) => ({ phase: phase.name, content: t.content })),
  );
}

/**
 * Applies one op to `current` (not changed). On success the new plan is
 * normalised (except for `view`, which returns `current` as it is and
 * `changed: false`); on any error nothing of the op applies.
 */
export function applyPhaseOp(current: PhasePlan, input: PhaseOpInput): PhaseOpResult {
  if (input.op === "view") {
    const text = taskCount(current) === 0 ? EMPTY_TEXT : describePlan(current);
    return { ok: true, plan: current, changed: false, text, details: { phases: current, completedTasks: [] } };
  }
  const change = changeFor(current, input);
  if ("errors" in change) return { ok: false, errors: change.errors };
  const plan = normalisePhases(change.plan);
  const text = taskCount(plan) === 0 ? CLEARED_TEXT : describePlan(plan);
  return { ok: true, plan, changed: true, text, details: { phases: plan, completedTasks: newlyCompleted(current, plan) } };
}

function changeFor(current: PhasePlan, input: PhaseOpInput): Change {
  switch (input.op) {
    case "init":
      return init(input);
    case "start":
      return start(current, input);
    case "done":
      return setStatus(current, input, "completed");
    case "drop":
      return setStatus(current, input, "abandoned");
    case "rm":
      return remove(current, input);
    case "append":
      return append(current, input);
    case "view":
      return { plan: current };
  }
}

/** The tool's error text for a failed op. */
export function formatErrors(errors: readonly string[]): string {
  return `Errors: ${errors.join("; ")}`;
}
