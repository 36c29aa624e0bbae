/**
 * A list-style plan (the PicoClaw `todo` items) as Markdown.
 *
 *     # Todos
 *     - [x] Draft the outline <!-- {"id":"1"} -->
 *     - [/] Write chapter one <!-- {"id":"2","priority":"high"} -->
 *
 * List plans have no phases: the renderer writes a single `# Todos` heading
 * (alone for an empty list) and the parser accepts and ignores any heading,
 * so pasting a phased plan keeps its tasks in order. Markers are those of
 * the phases form; `[-]` means canceled.
 *
 * Lossless round trip: each line ends with an HTML comment holding the
 * item's data as JSON, with `<` and `>` escaped so the comment can never be
 * closed or opened early: always the `id`, the `priority` unless it is the
 * default `medium`, and the exact `content` when the visible text differs
 * from it (the list tool stores text verbatim: outer spaces, line breaks).
 * The visible text is the content cleaned to one trimmed line. Since the
 * data comment is the line's last `<!--`, content may itself hold comments.
 *
 * For hand edits: a comment's `content` is used only while the visible text
 * still matches it, so editing the text wins; a line without a data comment
 * is a new item with a fresh id (the smallest unused positive number); a
 * trailing comment that is not a JSON object is part of the text. Bad lines,
 * duplicate ids, bad data and the tool's limits give `Line N: ...` errors.
 */
import { STATUS_MARKERS, type TaskStatus, classifyLine, splitLines } from "../markdown.js";
import { BLANK, MAX_CONTENT_BYTES, MAX_TODOS, cleanText, utf8Length } from "../text.js";
import { MAX_ID_BYTES, TODO_ERRORS, TODO_PRIORITIES, type TodoItem, type TodoPriority, type TodoStatus } from "./validate.js";

export const LIST_HEADING = "# Todos";

const TO_LIST: Readonly<Record<TaskStatus, TodoStatus>> = { pending: "pending", in_progress: "in_progress", completed: "completed", abandoned: "canceled" };
const TO_MARKER: Readonly<Record<TodoStatus, string>> = {
  pending: STATUS_MARKERS.pending,
  in_progress: STATUS_MARKERS.in_progress,
  completed: STATUS_MARKERS.completed,
  canceled: STATUS_MARKERS.abandoned,
};

const DATA_KEYS = new Set(["id", "priority", "content"]);

function dataComment(item: Readonly<TodoItem>, visible: string): string {
  const data: Record<string, string> = { id: item.id };
  if (item.priority !== "medium") data.priority = item.priority;
  if (item.content !== visible) data.content = item.content;
  return `<!-- ${JSON.stringify(data).replace(/</g, "\\u003c").replace(/>/g, "\\u003e")} -->`;
}

/** The list as Markdown under one `# Todos` heading. */
export function renderListMarkdown(items: readonly Readonly<TodoItem>[]): string {
  const lines = items.map((item) => {
    const visible = cleanText(item.content);
    return `- ${TO_MARKER[item.status]} ${[visible, dataComment(item, visible)].filter(Boolean).join(" ")}`;
  });
  return [LIST_HEADING, ...lines].join("\n");
}

type Data = { id?: string; priority?: TodoPriority; content?: string };

/** Splits a task's text from its trailing data comment, if it has one. */
function splitData(rest: string): { text: string; data?: Record<string, unknown> } {
  const trimmed = rest.trimEnd();
  const start = trimmed.lastIndexOf("<!--");
  if (!trimmed.endsWith("-->") || start < 0 || start + 4 > trimmed.length - 3) return { text: rest };
  try {
    const data: unknown = JSON.parse(trimmed.slice(start + 4, -3));
    if (data !== null && typeof data === "object" && !Array.isArray(data)) {
      return { text: trimmed.slice(0, start), data: data as Record<string, unknown> };
    }
  } catch {
    // Not our data: the comment is part of the text.
  }
  return { text: rest };
}

function readData(data: Record<string, unknown>): Data | { error: string } {
  for (const key of Object.keys(data)) if (!DATA_KEYS.has(key)) return { error: `unknown field "${key}" in the item data` };
  const { id, priority, content } = data;
  if (id !== undefined && (typeof id !== "string" || BLANK.test(id) || utf8Length(id) > MAX_ID_BYTES)) return { error: TODO_ERRORS.id };
  if (priority !== undefined && !(TODO_PRIORITIES as readonly unknown[]).includes(priority)) return { error: TODO_ERRORS.priority };
  if (content !== undefined && typeof content !== "string") return { error: "item content must be a string" };
  return { id, priority, content } as Data;
}

/** Reads a list back from Markdown; `errors` lists every bad line as `Line N: ...`. */
export function parseListMarkdown(text: string): { items: TodoItem[]; errors: string[] } {
  const parsed: { item: Omit<TodoItem, "id">; id?: string }[] = [];
  const ids = new Set<string>();
  const errors: string[] = [];
  for (const [i, raw] of splitLines(text).entries()) {
    const n = i + 1;
    const line = classifyLine(raw);
    if (line.kind === "blank" || line.kind === "heading") continue;
    if (line.kind === "error") {
      errors.push(`Line ${n}: ${line.message}`);
      continue;
    }
    const { text: shown, data } = splitData(line.rest);
    const read = data ? readData(data) : {};
    if ("error" in read) {
      errors.push(`Line ${n}: ${read.error}`);
      continue;
    }
    const visible = cleanText(shown);
    const content = read.content !== undefined && cleanText(read.content) === visible ? read.content : visible;
    if (BLANK.test(content)) errors.push(`Line ${n}: a task needs text`);
    else if (utf8Length(content) > MAX_CONTENT_BYTES) errors.push(`Line ${n}: task is longer than ${MAX_CONTENT_BYTES} bytes`);
    if (read.id !== undefined && ids.has(read.id)) errors.push(`Line ${n}: duplicate id "${read.id}"`);
    if (read.id !== undefined) ids.add(read.id);
    if (parsed.length === MAX_TODOS) errors.push(`Line ${n}: more than ${MAX_TODOS} todos`);
    parsed.push({ item: { content, status: TO_LIST[line.status], priority: read.priority ?? "medium" }, ...(read.id === undefined ? {} : { id: read.id }) });
  }
  let next = 1;
  const freshId = (): string => {
    while (ids.has(String(next))) next++;
    ids.add(String(next));
    return String(next);
  };
  return { items: parsed.map(({ item, id }) => ({ id: id ?? freshId(), ...item })), errors };
}
