import { z } from "zod";
import { defineTool, toolResult } from "../../../tools/tool.js";
import { CapacityError } from "../store.js";
import { MAX_CONTENT_BYTES, MAX_TODOS } from "../text.js";
import { MAX_ID_BYTES, TODO_ERRORS, TODO_PRIORITIES, TODO_STATUSES, type TodoItem, renderTodoResult, validateTodoArgs } from "./validate.js";

/** A stored list-style plan: readonly all the way down. */
export type TodoPlan = readonly Readonly<TodoItem>[];

/** What the list tool publishes (`ctx.publish`) after a write: the plan now, and the contents of the items this write completed. */
export interface ListPlanChange {
  style: "list";
  items: TodoPlan;
  completed: readonly string[];
}

/** What the list tool needs of a store. */
export interface ListPlanAccess {
  read(agentId: string, sessionKey: string): TodoPlan | undefined;
  write(agentId: string, sessionKey: string, items: TodoPlan): Promise<void>;
}

export const TODO_DESCRIPTION = `Keep a plan for multi-step work in this conversation: a list of steps you read and rewrite as you go. The user does not see this tool's results; tell them about progress in your own words.

Use it when a task needs 3 or more distinct steps, touches several files or topics, or the user gives you several things to do. Skip it for a single action, a quick question or small talk.

How to use it:
- {"action":"read"} returns the current plan. Read it before resuming earlier work or when you are unsure what is left; do not rebuild a plan from memory.
- {"action":"write","todos":[...]} REPLACES the whole list. Always send every item again, unchanged ones included, with the same ids, and keep unfinished steps.
- Each item: id (short and stable, e.g. "1", "2"), content (a concrete, imperative step in the user's language; keep commands and paths verbatim), status, priority.
- status: "pending" (not started, the default), "in_progress" (mark it when you start the step; keep one at a time), "completed" (only after checking it really worked), "canceled" (no longer needed; cancel rather than delete).
- priority: "high", "medium" (the default) or "low".
- Add follow-ups you discover as new pending items. Record a plan, not a log of tool calls.
- When the work is finished or abandoned, write "todos": [] to clear the plan.

Limits: at most ${MAX_TODOS} items; id up to ${MAX_ID_BYTES} bytes, content up to ${MAX_CONTENT_BYTES} bytes, both non-blank; ids unique. Plans live in memory for this session only: /clear and a restart lose them. The tool does not run or schedule anything.`;

const itemSchema = z.strictObject({
  id: z.string().min(1).max(MAX_ID_BYTES).describe("Stable unique id of the step."),
  content: z.string().min(1).max(MAX_CONTENT_BYTES).describe("The step, concrete and imperative."),
  status: z.enum(TODO_STATUSES).default("pending"),
  priority: z.enum(TODO_PRIORITIES).default("medium"),
});

/** What the model is shown; the tool checks arguments itself, in PicoClaw's exact order. */
export const todoParameters = z.strictObject({
  action: z.enum(["read", "write"]),
  todos: z.array(itemSchema).max(MAX_TODOS).optional().describe("Required for write: the full replacement list. [] clears it."),
});

/** The `read` answer for a key, exactly as the tool gives it (for the HTTP view). Takes no slot. */
export function readTodos(store: ListPlanAccess, agentId: string, sessionKey: string): string {
  return renderTodoResult(store.read(agentId, sessionKey) ?? [], "Retrieved");
}

/** The PicoClaw `todo` tool over the shared store's list view. Results are silent. */
export function createTodoTool(store: ListPlanAccess) {
  return defineTool({
    name: "todo",
    description: TODO_DESCRIPTION,
    parameters: todoParameters,
    validatesOwnArguments: true,
    enabledByDefault: false,
    execute: async (args, ctx) => {
      const request = validateTodoArgs(args, ctx);
      if ("error" in request) return toolResult.error(request.error);
      if (request.action === "read") {
        return toolResult.silent(renderTodoResult(store.read(ctx.agentId, ctx.sessionKey) ?? [], "Retrieved"));
      }
      const before = new Set((store.read(ctx.agentId, ctx.sessionKey) ?? []).filter((item) => item.status === "completed").map((item) => item.id));
      try {
        await store.write(ctx.agentId, ctx.sessionKey, request.todos);
      } catch (error) {
        if (error instanceof CapacityError) return toolResult.error(TODO_ERRORS.capacity);
        throw error;
      }
      // The todo feature turns this into `plan.updated` for UIs, as for the phases style.
      const completed = request.todos.filter((item) => item.status === "completed" && !before.has(item.id)).map((item) => item.content);
      ctx.publish({ style: "list", items: request.todos, completed } satisfies ListPlanChange);
      return toolResult.silent(renderTodoResult(request.todos, "Updated"));
    },
  });
}
