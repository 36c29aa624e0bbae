import type { PhasePlan } from "./phases.js";
import { type PhasePlanAccess, isPhasePlanEmpty, ownPhasePlan } from "./phases-tool.js";
import { PlanStore } from "./store.js";
import type { TodoItem } from "./validate.js";

/**
 * Both todo styles share one store, so they share its keys, its capacity
 * (`tools.todo.max_plans`), `/clear` and the release of sub-turn plans.
 * A key always holds the style of the agent it belongs to; each style's
 * tool sees the store through its own view.
 */

export const TODO_STYLES = ["list", "phases"] as const;
export type TodoStyle = (typeof TODO_STYLES)[number];

/** A stored list-style plan: readonly all the way down. */
export type TodoPlan = readonly Readonly<TodoItem>[];

export type StoredPlan = { readonly style: "list"; readonly items: TodoPlan } | { readonly style: "phases"; readonly phases: PhasePlan };

export type SharedPlanStore = PlanStore<StoredPlan>;

function ownList(items: TodoPlan): TodoPlan {
  return Object.freeze(items.map(({ id, content, status, priority }) => Object.freeze({ id, content, status, priority })));
}

export function createPlanStore(maxPlans?: number): SharedPlanStore {
  return new PlanStore<StoredPlan>({
    ...(maxPlans === undefined ? {} : { maxPlans }),
    isEmpty: (plan) => (plan.style === "list" ? plan.items.length === 0 : isPhasePlanEmpty(plan.phases)),
    own: (plan) =>
      Object.freeze(plan.style === "list" ? { style: "list", items: ownList(plan.items) } : { style: "phases", phases: ownPhasePlan(plan.phases) }),
  });
}

/** What the list tool needs of a store. */
export interface ListPlanAccess {
  read(agentId: string, sessionKey: string): TodoPlan | undefined;
  write(agentId: string, sessionKey: string, items: TodoPlan): Promise<void>;
}

/** The list style's view of the shared store. */
export function listView(store: SharedPlanStore): ListPlanAccess {
  return {
    read: (agentId, sessionKey) => {
      const plan = store.read(agentId, sessionKey);
      return plan?.style === "list" ? plan.items : undefined;
    },
    write: (agentId, sessionKey, items) => store.write(agentId, sessionKey, { style: "list", items }),
  };
}

/** The phases style's view of the shared store. */
export function phasesView(store: SharedPlanStore): PhasePlanAccess {
  const read = (agentId: string, sessionKey: string) => {
    const plan = store.read(agentId, sessionKey);
    return plan?.style === "phases" ? plan.phases : undefined;
  };
  return {
    read,
    update: (agentId, sessionKey, change) =>
      store.update(agentId, sessionKey, (current) => {
        const { plan, result } = change(current?.style === "phases" ? current.phases : undefined);
        return { plan: { style: "phases", phases: plan }, result };
      }),
  };
}
