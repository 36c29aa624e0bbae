/**
 * A list-style plan (the PicoClaw `todo` items) as Markdown, for people:
 *
 *     # Todos
 *     - [x] Draft the outline
 *     - [/] Write chapter one (priority: high)
 *
 * List plans have no phases: the renderer writes a single `# Todos` heading
 * (alone for an empty list) and the parser accepts and ignores any heading,
 * so pasting a phased plan keeps its tasks in order (`headings` says which
 * were dropped, so the user can be told). Markers are those of the phases
 * form; `[-]` means canceled. A priority other than the default `medium`
 * is shown as a trailing `(priority: high)`, and read back from it.
 *
 * No ids are shown (a person reads and edits this): reading back, each line
 * is matched to the plan it was made from (`current`) by its text, in
 * order, and keeps that item's id, and its exact content when the item's
 * text cleaned to one trimmed line is what the line shows (the list tool
 * stores text verbatim: outer spaces, line breaks). A line whose text
 * matches no item is a new item with a fresh id (the smallest unused
 * positive number). So render-then-parse against the same plan gives it
 * back exactly; a medium item whose text itself ends like a priority is
 * written with `(priority: medium)` to stay unambiguous (so is one whose
 * text ends in what reads as an old data comment, below).
 *
 * Text written before ids left the Markdown ended each line with an HTML
 * comment holding the item's data as JSON (`<!-- {"id":"1"} -->`); such a
 * comment is still read (its id wins over matching), so an old copy pasted
 * back loses nothing. Bad lines, duplicate ids, bad data and the tool's
 * limits give `Line N: ...` errors.
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

/** A trailing `(priority: high)`: how a line shows a priority other than the default. */
const PRIORITY_MARK = /\s*\(priority:\s*(high|medium|low)\)\s*$/i;

/** The list as Markdown under one `# Todos` heading, without ids. */
export function renderListMarkdown(items: readonly Readonly<TodoItem>[]): string {
  const lines = items.map((item) => {
    const visible = cleanText(item.content);
    // Text that would read back as a priority or an old data comment says its priority, so it stays text.
    const ambiguous = PRIORITY_MARK.test(visible) || splitData(visible).data !== undefined;
    const mark = item.priority !== "medium" || ambiguous ? ` (priority: ${item.priority})` : "";
    return `- ${TO_MARKER[item.status]} ${visible}${mark}`;
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

/** What a list read back from Markdown is: its items, every bad line as `Line N: ...`, and the headings it had (a list keeps none). */
export interface ParsedList {
  items: TodoItem[];
  errors: string[];
  headings: string[];
}

/** Reads a list back from Markdown, matching its lines to `current` (the plan it was made from) to keep their ids. */
export function parseListMarkdown(text: string, current: readonly Readonly<TodoItem>[] = []): ParsedList {
  type Line = { status: TodoStatus; visible: string; priority: TodoPriority; data: Data; n: number };
  const lines: Line[] = [];
  const ids = new Set<string>();
  const errors: string[] = [];
  const headings: string[] = [];
  for (const [i, raw] of splitLines(text).entries()) {
    const n = i + 1;
    const line = classifyLine(raw);
    if (line.kind === "blank") continue;
    if (line.kind === "heading") {
      if (`# ${line.text}` !== LIST_HEADING) headings.push(line.text);
      continue;
    }
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
    let visible = cleanText(shown);
    const mark = PRIORITY_MARK.exec(visible);
    if (mark) visible = visible.slice(0, mark.index);
    if (read.id !== undefined && ids.has(read.id)) errors.push(`Line ${n}: duplicate id "${read.id}"`);
    if (read.id !== undefined) ids.add(read.id);
    if (lines.length === MAX_TODOS) errors.push(`Line ${n}: more than ${MAX_TODOS} todos`);
    const priority = (mark?.[1]?.toLowerCase() as TodoPriority | undefined) ?? read.priority ?? "medium";
    lines.push({ status: TO_LIST[line.status], visible, priority, data: read, n });
  }
  // Each line without an id of its own takes the first item of the plan with its text that no line took yet.
  const unclaimed = current.filter((item) => !ids.has(item.id));
  const matched = lines.map((line): Readonly<TodoItem> | undefined => {
    if (line.data.id !== undefined) return current.find((item) => item.id === line.data.id);
    const index = unclaimed.findIndex((item) => cleanText(item.content) === line.visible);
    if (index < 0) return undefined;
    const [item] = unclaimed.splice(index, 1);
    ids.add(item!.id);
    return item;
  });
  // A fresh id is none the plan had: the model may still mean a removed item by its old id.
  for (const item of current) ids.add(item.id);
  let next = 1;
  const freshId = (): string => {
    while (ids.has(String(next))) next++;
    ids.add(String(next));
    return String(next);
  };
  const items = lines.map((line, i): TodoItem => {
    const item = matched[i];
    const exact = [line.data.content, item?.content].find((content) => content !== undefined && cleanText(content) === line.visible);
    const content = exact ?? line.visible;
    if (BLANK.test(content)) errors.push(`Line ${line.n}: a task needs text`);
    else if (utf8Length(content) > MAX_CONTENT_BYTES) errors.push(`Line ${line.n}: task is longer than ${MAX_CONTENT_BYTES} bytes`);
    return { id: line.data.id ?? item?.id ?? freshId(), content, status: line.status, priority: line.priority };
  });
  errors.sort((a, b) => lineOf(a) - lineOf(b));
  return { items, errors, headings };
}

const lineOf = (error: string): number => Number(/^Line (\d+):/.exec(error)?.[1] ?? 0);
