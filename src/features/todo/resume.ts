import { z } from "zod";
import type { ChatMessage } from "../../models/message.js";
import { TASK_STATUSES } from "./markdown.js";
import type { PhasePlan } from "./phases/plan.js";
import { MAX_PHASE_NAME_BYTES, MAX_PHASES, MAX_TASKS, MAX_TASK_BYTES } from "./phases/plan.js";
import type { SharedPlanStore, StoredPlan } from "./plans.js";
import { CapacityError } from "./store.js";
import { type SessionScoped, SessionState } from "../../session/state.js";

/**
 * The phases style across restarts, as oh-my-pi keeps it: a successful
 * phases call's result carries the plan after it (`details.phases`), kept
 * with the result in the session's history; a change by the user (`/todo`)
 * leaves a record with the plan. When this process holds no plan for a
 * session kept on disk (it was restarted), the latest of those is the plan
 * again, with its completed and abandoned tasks left out (and the phases
 * they leave empty); `/todo` and the plan view show it whole, closed tasks
 * too, until the plan changes. The list style keeps PicoClaw's rule: in
 * memory only, never rebuilt.
 */

/** The record type a `/todo` change leaves in the history (a system message no model is sent). */
export const TODO_RECORD = "todo";

/** What a kept plan must look like to be taken back (the history is read from outside the process). */
const keptPlan = z
  .array(
    z.object({
      name: z.string().max(MAX_PHASE_NAME_BYTES * 4),
      tasks: z.array(z.object({ content: z.string().max(MAX_TASK_BYTES * 4), status: z.enum(TASK_STATUSES) })).max(MAX_TASKS),
    }),
  )
  .max(MAX_PHASES);

const keptDetails = z.object({ phases: keptPlan });

/** The latest plan the history keeps: a todo call's details or a `/todo` record, newest first; undefined when there is none. */
export function latestKeptPlan(messages: readonly ChatMessage[], tool: string): PhasePlan | undefined {
  const todoCalls = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) if (call.function.name === tool) todoCalls.add(call.id);
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    let kept: unknown;
    if (message.role === "tool" && message.details !== undefined && !message.is_error && todoCalls.has(message.tool_call_id)) kept = message.details;
    else if (message.role === "system" && message.record?.type === TODO_RECORD) kept = message.record;
    else continue;
    const parsed = keptDetails.safeParse(kept);
    if (parsed.success)
      return parsed.data.phases.map((phase) => ({ name: phase.name, tasks: phase.tasks.map(({ content, status }) => ({ content, status })) }));
  }
  return undefined;
}

/** The plan without its completed and abandoned tasks, and without the phases that leaves empty. */
export function openTasksOnly(plan: PhasePlan): PhasePlan {
  return plan
    .map((phase) => ({ name: phase.name, tasks: phase.tasks.filter((task) => task.status === "pending" || task.status === "in_progress") }))
    .filter((phase) => phase.tasks.length > 0);
}

export interface PlanResumeDeps {
  store: SharedPlanStore;
  tool: string;
  isDurable(sessionKey: string): boolean;
  /** Whether the agent keeps its plan in phases. */
  isPhases(agentId: string): boolean;
  /** The session's history as kept (read without loading an evicted session into memory). */
  history(sessionKey: string): Promise<readonly ChatMessage[]>;
  warn(message: string): void;
}

export interface PlanResume extends SessionScoped {
  /** Rebuilds the agent's plan in the session from its history, when this process holds none and the session is kept on disk. */
  resume(agentId: string, sessionKey: string): Promise<void>;
  /** The plan as the user is shown it (`/todo`, the plan view): the rebuilt plan whole, closed tasks too, until it changes. */
  shown(agentId: string, sessionKey: string): StoredPlan | undefined;
}

export function planResume(deps: PlanResumeDeps): PlanResume {
  // A rebuilt plan as the store holds it, and the whole plan it came from; an entry only while the store holds a plan.
  const rebuilt = new SessionState<{ stored: StoredPlan | undefined; whole: StoredPlan }>();
  return {
    async resume(agentId, sessionKey) {
      const { store } = deps;
      if (store.read(agentId, sessionKey) !== undefined || !deps.isPhases(agentId) || !deps.isDurable(sessionKey)) return;
      const latest = latestKeptPlan(await deps.history(sessionKey), deps.tool);
      if (!latest) return;
      const whole: StoredPlan = { style: "phases", phases: latest };
      const open = openTasksOnly(latest);
      // Nothing open is nothing to take up again; the user is still shown what was done.
      if (open.length === 0) {
        rebuilt.set(agentId, sessionKey, { stored: undefined, whole });
        return;
      }
      let wrote: boolean;
      try {
        // Only into an empty slot: a call that ran meanwhile (calls of one answer run side by side) keeps its change.
        wrote = await store.update(agentId, sessionKey, (current) => ({ plan: current ?? { style: "phases", phases: open }, result: current === undefined }));
      } catch (error) {
        if (!(error instanceof CapacityError)) throw error;
        deps.warn(`todo: the plan of ${sessionKey} was not rebuilt after the restart: tools.todo.max_plans plans are held already`);
        return;
      }
      const stored = store.read(agentId, sessionKey);
      if (wrote && stored) rebuilt.set(agentId, sessionKey, { stored, whole });
    },
    shown(agentId, sessionKey) {
      const current = deps.store.read(agentId, sessionKey);
      const entry = rebuilt.get(agentId, sessionKey);
      if (!entry) return current;
      if (entry.stored === current) return entry.whole;
      rebuilt.delete(agentId, sessionKey);
      return current;
    },
    clearSession: (sessionKey) => rebuilt.clearSession(sessionKey),
  };
}
