/**
 * The todo tool's arguments, checked exactly as PicoClaw checks them: the
 * first failing check wins and its message is the whole result. Everything
 * here is pure; the store is never touched before the arguments are valid.
 */
import { SHARED_ERRORS } from "../messages.js";
import { BLANK, MAX_CONTENT_BYTES, MAX_TODOS, utf8Length } from "../text.js";

export const TODO_STATUSES = ["pending", "in_progress", "completed", "canceled"] as const;
export const TODO_PRIORITIES = ["low", "medium", "high"] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];
export type TodoPriority = (typeof TODO_PRIORITIES)[number];

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
  priority: TodoPriority;
}

export const MAX_ID_BYTES = 128;

export const TODO_ERRORS = {
  noContext: SHARED_ERRORS.noContext,
  action: "action must be read or write",
  todosOnRead: "todos is only accepted for write",
  noArray: "write requires a todos array; use [] to clear",
  notObjects: "todos must contain objects",
  tooMany: `cannot store more than ${MAX_TODOS} todos`,
  nullField: "todo fields must not be null",
  id: `todo id must contain 1-${MAX_ID_BYTES} bytes of nonblank text`,
  content: `todo content must contain 1-${MAX_CONTENT_BYTES} bytes of nonblank text`,
  duplicate: "todo IDs must be unique",
  status: "invalid todo status",
  priority: "invalid todo priority",
  capacity: SHARED_ERRORS.capacity,
} as const;

export type TodoRequest = { action: "read" } | { action: "write"; todos: TodoItem[] };

const ITEM_KEYS = new Set(["id", "content", "status", "priority"]);
const STATUSES = new Set<string>(TODO_STATUSES);
const PRIORITIES = new Set<string>(TODO_PRIORITIES);

function nonBlankWithin(value: unknown, maxBytes: number): boolean {
  if (typeof value !== "string") return false;
  const bytes = utf8Length(value);
  return bytes >= 1 && bytes <= maxBytes && !BLANK.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return "array";
  return typeof value === "object" ? "object" : typeof value;
}

/**
 * Checks `args` (the model's parsed JSON) and returns the request, or the
 * exact error message of the first failing check. The returned items are
 * fresh objects with defaults filled in: nothing the caller holds can reach them.
 */
export function validateTodoArgs(args: unknown, context: { agentId?: string; sessionKey?: string }): TodoRequest | { error: string } {
  if (!context.agentId || !context.sessionKey) return { error: TODO_ERRORS.noContext };
  const input = isPlainObject(args) ? args : {};
  const action = input.action;
  if (action !== "read" && action !== "write") return { error: TODO_ERRORS.action };
  for (const key of Object.keys(input)) {
    if (key !== "action" && key !== "todos") return { error: `unknown argument: ${key}` };
  }
  if (action === "read") {
    return Object.hasOwn(input, "todos") ? { error: TODO_ERRORS.todosOnRead } : { action };
  }

  const raw = input.todos;
  if (!Array.isArray(raw)) return { error: TODO_ERRORS.noArray };
  if (!raw.every(isPlainObject)) return { error: TODO_ERRORS.notObjects };
  if (raw.length > MAX_TODOS) return { error: TODO_ERRORS.tooMany };

  // Shape first, over the whole list in document order (unknown keys, wrong JSON types).
  for (let i = 0; i < raw.length; i++) {
    for (const [key, value] of Object.entries(raw[i] as Record<string, unknown>)) {
      if (!ITEM_KEYS.has(key)) return { error: `invalid todos: todos[${i}]: unknown field "${key}"` };
      if (value !== null && typeof value !== "string") {
        return { error: `invalid todos: todos[${i}].${key}: expected string, got ${jsonType(value)}` };
      }
    }
  }

  // Then each item in order.
  const todos: TodoItem[] = [];
  const ids = new Set<string>();
  for (const item of raw as Record<string, string | null | undefined>[]) {
    for (const key in item) if (item[key] === null) return { error: TODO_ERRORS.nullField };
    const { id, content, status = "pending", priority = "medium" } = item;
    if (!nonBlankWithin(id, MAX_ID_BYTES)) return { error: TODO_ERRORS.id };
    if (!nonBlankWithin(content, MAX_CONTENT_BYTES)) return { error: TODO_ERRORS.content };
    if (ids.has(id as string)) return { error: TODO_ERRORS.duplicate };
    ids.add(id as string);
    if (!STATUSES.has(status as string)) return { error: TODO_ERRORS.status };
    if (!PRIORITIES.has(priority as string)) return { error: TODO_ERRORS.priority };
    todos.push({ id: id as string, content: content as string, status: status as TodoStatus, priority: priority as TodoPriority });
  }
  return { action, todos };
}

/** The tool's success text: compact JSON, keys in PicoClaw's order. */
export function renderTodoResult(todos: readonly Readonly<TodoItem>[], verb: "Retrieved" | "Updated"): string {
  return JSON.stringify({
    todos: todos.map(({ id, content, status, priority }) => ({ id, content, status, priority })),
    total_count: todos.length,
    message: `${verb} ${todos.length} todos`,
  });
}
