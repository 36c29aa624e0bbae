import type { TODO_STYLES } from "./config.js";
import type { ListPlanAccess, TodoPlan } from "./list/tool.js";
import type { TodoStatus } from "./list/validate.js";
import type { TaskStatus } from "./markdown.js";
import type { PhasePlan } from "./phases/plan.js";
import { type PhasePlanAccess, isPhasePlanEmpty, ownPhasePlan } from "./phases/tool.js";
import { PlanStore } from "./store.js";

/**
 * Both todo styles share one store, so they share its keys, its capacity
 * (`tools.todo.max_plans`), `/clear` and the release of sub-turn plans.
 * A key always holds the style of the agent it belongs to; each style's
 * tool sees the store through its own view.
 */

export type TodoStyle = (typeof TODO_STYLES)[number];

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

const AS_TASK: Readonly<Record<TodoStatus, TaskStatus>> = { pending: "pending", in_progress: "in_progress", completed: "completed", canceled: "abandoned" };

/** A list-style plan seen as phases (for `plan.updated` and UIs): one phase `Todos`, canceled as abandoned; `[]` when empty. */
export function listAsPhases(items: TodoPlan): PhasePlan {
  if (items.length === 0) return [];
  return [{ name: "Todos", tasks: items.map((item) => ({ content: item.content, status: AS_TASK[item.status] })) }];
}

/** Any stored plan as phases (`[]` for none). */
export function planAsPhases(plan: StoredPlan | undefined): PhasePlan {
  if (plan?.style === "phases") return plan.phases;
  return plan?.style === "list" ? listAsPhases(plan.items) : [];
}
