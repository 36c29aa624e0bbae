import { z } from "zod";
import { defineTool, type ToolResult, toolResult } from "../../../tools/tool.js";
import { parsePhaseArgs } from "./args.js";
import { applyPhaseOp, formatErrors } from "./ops.js";
import { DEFAULT_PHASE, MAX_PHASE_NAME_BYTES, MAX_PHASES, MAX_TASK_BYTES, MAX_TASKS, PHASE_OPS, type PhaseOpSuccess, type PhasePlan } from "./plan.js";
import { SHARED_ERRORS } from "../messages.js";
import { CapacityError, PlanStore, deepFreeze } from "../store.js";

export const PHASES_DESCRIPTION = `Keep a plan for multi-step work in this conversation, as named phases of tasks that you change with small ops, one op per call. The user does not see this tool's results; tell them about progress in your own words.

Use it when a task needs 3 or more distinct steps, touches several files or topics, or the user gives you several things to do. Skip it for a single action, a quick question or small talk.

Ops (fields sit next to "op"):
- {"op":"init","list":[{"phase":"Build","items":["Write parser","Add tests"]},{"phase":"Ship","items":["Release"]}]} creates the plan, replacing any old one. For a single phase: {"op":"init","items":[...],"phase":"..."} (phase defaults to "${DEFAULT_PHASE}").
- {"op":"start","task":"Add tests"} marks that task in progress (one at a time; it also reopens a finished or dropped task).
- {"op":"done","task":"Add tests"} marks it completed, only after checking it really worked; the next pending task then starts by itself. {"op":"done","phase":"Build"} completes every task of a phase; {"op":"done"} alone completes every task.
- {"op":"drop",...} works like done but marks tasks abandoned (no longer needed); drop rather than delete.
- {"op":"rm","task":"..."} deletes a task; {"op":"rm","phase":"..."} empties a phase; {"op":"rm"} alone empties every phase (do this when the work is finished or given up; init starts a new plan).
- {"op":"append","phase":"Build","items":["Fix lint"]} adds pending tasks at the end of a phase (created if missing). Add follow-ups you discover this way.
- {"op":"view"} shows the plan. Read it before resuming earlier work instead of rebuilding a plan from memory.

Tasks are named by their exact text, not by ids or numbers: copy it from the last result. Task texts are unique in the plan, phase names too. Write tasks as concrete, imperative steps in the user's language; keep commands and paths verbatim.
Each result lists the remaining tasks, the current phase's progress and the whole plan ([ ] pending, [/] in progress, [x] completed, [-] abandoned). A call with any error changes nothing; fix every listed error and send it again.

Limits: at most ${MAX_TASKS} tasks and ${MAX_PHASES} phases; a task up to ${MAX_TASK_BYTES} bytes, a phase name up to ${MAX_PHASE_NAME_BYTES}. Plans are kept for this session: /clear loses them; after a restart, a session kept on disk gets its open tasks back (finished and dropped ones are left out). The tool does not run or schedule anything.`;

const items = z.array(z.string());

/** What the model is shown; the tool checks arguments itself so that its error texts are exact. */
export const phasesParameters = z.strictObject({
  op: z.enum(PHASE_OPS).describe("The one change to make (or view)."),
  task: z.string().optional().describe("Exact text of one task (start, done, drop, rm)."),
  phase: z.string().optional().describe("Phase name (done, drop, rm: the whole phase; append: where to add; init: the phase for items)."),
  items: items.optional().describe("Task texts (append; init with a single phase)."),
  list: z
    .array(z.strictObject({ phase: z.string(), items: items.min(1) }))
    .optional()
    .describe("init: every phase in order with its tasks."),
});

/** What the tool needs of a store; a `PlanStore<PhasePlan>` has it. */
export interface PhasePlanAccess {
  read(agentId: string, sessionKey: string): PhasePlan | undefined;
  update<R>(agentId: string, sessionKey: string, change: (current: PhasePlan | undefined) => { plan: PhasePlan; result: R }): Promise<R>;
}

/** Only a plan with no phase is empty (deleted, its slot freed); phases whose tasks were removed keep theirs. */
export const isPhasePlanEmpty = (plan: PhasePlan): boolean => plan.length === 0;

/** A frozen copy with only the model's fields. */
export function ownPhasePlan(plan: PhasePlan): PhasePlan {
  return deepFreeze(plan.map((phase) => ({ name: phase.name, tasks: phase.tasks.map(({ content, status }) => ({ content, status })) })));
}

/** The store for phase-style plans (a plan with tasks takes one slot). */
export function createPhasesStore(maxPlans?: number): PlanStore<PhasePlan> {
  return new PlanStore<PhasePlan>({ ...(maxPlans === undefined ? {} : { maxPlans }), isEmpty: isPhasePlanEmpty, own: ownPhasePlan });
}

/** Carries a failed op's errors out of `store.update`, so the store keeps its plan. */
class OpFailed extends Error {
  constructor(readonly errors: string[]) {
    super(formatErrors(errors));
  }
}

/** Where a session's plan lives (oh-my-pi's `storage`): `session` when the session is kept on disk (a restart rebuilds it from the results), else `memory`. */
export type PlanStorage = "session" | "memory";

export interface PhasesToolOptions {
  /** Whether the session is kept beyond the process (default: never). */
  isDurable?(sessionKey: string): boolean;
  /** Rebuilds the session's plan from its history when this process has none (after a restart); before every call. */
  resume?(agentId: string, sessionKey: string): Promise<void>;
}

/**
 * Silent text for the model; the details (the plan, the tasks completed,
 * `storage`) are frozen, as listeners and UIs share them, and kept with the
 * result in the history, where a restart finds the latest plan again.
 */
function success(result: PhaseOpSuccess, storage: PlanStorage): ToolResult {
  return { ...toolResult.silent(result.text), details: deepFreeze({ ...result.details, storage }), keepDetails: true };
}

/** The phase/op form of the `todo` tool over a shared store. Results are silent. */
export function createPhasesTool(store: PhasePlanAccess, opts: PhasesToolOptions = {}) {
  return defineTool({
    name: "todo",
    description: PHASES_DESCRIPTION,
    parameters: phasesParameters,
    validatesOwnArguments: true,
    enabledByDefault: false,
    execute: async (args, ctx) => {
      if (!ctx.agentId || !ctx.sessionKey) return toolResult.error(SHARED_ERRORS.noContext);
      const parsed = parsePhaseArgs(args);
      if (!parsed.ok) return toolResult.error(formatErrors(parsed.errors));
      const { input } = parsed;
      const storage: PlanStorage = opts.isDurable?.(ctx.sessionKey) ? "session" : "memory";
      await opts.resume?.(ctx.agentId, ctx.sessionKey);
      if (input.op === "view") {
        const viewed = applyPhaseOp(store.read(ctx.agentId, ctx.sessionKey) ?? [], input);
        return viewed.ok ? success(viewed, storage) : toolResult.error(formatErrors(viewed.errors));
      }
      let result: PhaseOpSuccess;
      try {
        result = await store.update(ctx.agentId, ctx.sessionKey, (current) => {
          const applied = applyPhaseOp(current ?? [], input);
          if (!applied.ok) throw new OpFailed(applied.errors);
          return { plan: applied.plan, result: applied };
        });
      } catch (error) {
        if (error instanceof OpFailed) return toolResult.error(error.message);
        if (error instanceof CapacityError) return toolResult.error(formatErrors([SHARED_ERRORS.capacity]));
        throw error;
      }
      const reply = success(result, storage);
      // The todo feature turns this into `plan.updated` for UIs.
      ctx.publish({ style: "phases", phases: result.details.phases, completedTasks: result.details.completedTasks });
      return reply;
    },
  });
}
