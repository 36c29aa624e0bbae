/**
 * The phased plan model: named phases of tasks, their limits, how text is
 * cleaned and how a plan is normalised. Pure; the ops are in phase-ops.ts.
 *
 * Beyond the reference (see README, "Differences from PicoClaw and
 * oh-my-pi"):
 * - Text is cleaned on the way in: every task content and phase name, and
 *   every `task`/`phase` used for a lookup, has its line breaks (with the
 *   spaces around them) turned into one space and is trimmed. Stored text is
 *   therefore one line with no outer spaces, which is what lets the Markdown
 *   form round-trip, and `"  Ship "` finds the task `Ship`.
 * - Limits: at most 100 tasks and 100 phases, task content up to 1024 bytes
 *   and phase names up to 128 bytes of UTF-8. Task contents are unique in
 *   the whole plan, phase names in the plan (lookups are by exact text).
 *
 * As the reference does, a plan keeps its phases when their tasks go
 * (`rm`): only a plan with no phase at all is empty.
 */
import type { TaskStatus } from "../markdown.js";
import { MAX_CONTENT_BYTES, MAX_TODOS } from "../text.js";

export interface Task {
  readonly content: string;
  readonly status: TaskStatus;
}

export interface Phase {
  readonly name: string;
  readonly tasks: readonly Task[];
}

/** A whole plan, in phase order. Stored plans are frozen, so every level is readonly. */
export type PhasePlan = readonly Phase[];

export const PHASE_OPS = ["init", "start", "done", "drop", "rm", "append", "view"] as const;
export type PhaseOpName = (typeof PHASE_OPS)[number];

/** One op with its (type-checked, not yet meaning-checked) fields. */
export interface PhaseOpInput {
  op: PhaseOpName;
  task?: string;
  phase?: string;
  items?: readonly string[];
  list?: readonly { phase?: string; items?: readonly string[] }[];
}

export interface CompletedTask {
  phase: string;
  content: string;
}

/** Structured result for UIs: the plan and the tasks this call completed. */
export interface PlanDetails {
  phases: PhasePlan;
  completedTasks: CompletedTask[];
}

/** `changed` is false only for `view`, which must not be written back. */
export interface PhaseOpSuccess {
  ok: true;
  plan: PhasePlan;
  changed: boolean;
  text: string;
  details: PlanDetails;
}

export type PhaseOpResult = PhaseOpSuccess | { ok: false; errors: string[] };

export const DEFAULT_PHASE = "Tasks";
export const MAX_TASKS = MAX_TODOS;
export const MAX_PHASES = 100;
export const MAX_TASK_BYTES = MAX_CONTENT_BYTES;
export const MAX_PHASE_NAME_BYTES = 128;

export const PHASE_ERRORS = {
  missingList: "Missing list for init operation",
  listAndItems: "Use either list or items for init, not both",
  missingTask: "Missing task content",
  missingPhase: "Missing phase name",
  appendPhase: "Missing phase name for append operation",
  appendItems: "Missing items for append operation",
  tooManyTasks: `A plan holds at most ${MAX_TASKS} tasks`,
  tooManyPhases: `A plan holds at most ${MAX_PHASES} phases`,
  taskTooLong: `Task content is longer than ${MAX_TASK_BYTES} bytes`,
  phaseTooLong: `Phase name is longer than ${MAX_PHASE_NAME_BYTES} bytes`,
} as const;

export const CLEARED_TEXT = "Todo list cleared.";
export const EMPTY_TEXT = "Todo list is empty.";

export const isOpen = (task: Task): boolean => task.status === "pending" || task.status === "in_progress";
export const taskCount = (plan: PhasePlan): number => plan.reduce((n, phase) => n + phase.tasks.length, 0);

/**
 * Keeps at most one task in progress (the first) and, when none is, starts
 * the first pending task in phase order. Phases are kept, empty ones too.
 */
export function normalisePhases(plan: PhasePlan): PhasePlan {
  let current = plan.some((p) => p.tasks.some((t) => t.status === "in_progress"));
  let seen = false;
  return plan.map((phase) => ({
    name: phase.name,
    tasks: phase.tasks.map((task) => {
      if (task.status === "in_progress") {
        if (seen) return { content: task.content, status: "pending" as const };
        seen = true;
      } else if (!current && task.status === "pending") {
        current = seen = true;
        return { content: task.content, status: "in_progress" as const };
      }
      return { content: task.content, status: task.status };
    }),
  }));
}
