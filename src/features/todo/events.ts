import type { CompletedTask, PhasePlan } from "./phases/plan.js";
import type { TodoStyle } from "./plans.js";

/** What a todo tool publishes (`ctx.publish`) after a change, and what `plan.updated` carries besides its scope. */
export interface PlanUpdate {
  style: TodoStyle;
  /** The plan as phases (a list-style plan as one phase `Todos`). */
  phases: PhasePlan;
  /** The tasks this change completed. */
  completedTasks: readonly CompletedTask[];
}

declare module "../../port/events.js" {
  interface RuntimeEvents {
    /** A todo plan changed, by the model's tool call (its turn and call named) or the user's /todo (none). */
    "plan.updated": EventScope & PlanUpdate & { turnId?: string; callId?: string };
  }
}
