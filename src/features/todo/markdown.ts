/**
 * The Markdown vocabulary both todo styles share: the four statuses a task
 * line can show, the marker each is written with, and how one line is read
 * (blank, `#` heading, `- [m] task`, or an error). Each style renders and
 * parses whole plans in its own folder.
 */

export const TASK_STATUSES = ["pending", "in_progress", "completed", "abandoned"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** How each status is written in Markdown and in the phases tool's plan tree. */
export const STATUS_MARKERS: Readonly<Record<TaskStatus, string>> = {
  pending: "[ ]",
  in_progress: "[/]",
  completed: "[x]",
  abandoned: "[-]",
};

/** Every marker the parser reads, by the character between the brackets. */
const MARKER_STATUS: ReadonlyMap<string, TaskStatus> = new Map([
  ["", "pending"],
  [" ", "pending"],
  ["/", "in_progress"],
  [">", "in_progress"],
  ["~", "abandoned"],
  ["x", "completed"],
  ["X", "completed"],
  ["-", "abandoned"],
]);

export type MarkdownLine =
  | { kind: "blank" }
  | { kind: "heading"; text: string }
  | { kind: "task"; status: TaskStatus; rest: string }
  | { kind: "error"; message: string };

// dotAll: a line may hold U+2028 and the like, which `.` would not match.
const HEADING = /^#{1,6}(?:\s+(.*))?$/s;
const BULLET = /^[-*+]\s+(.*)$/s;
const MARKER = /^\\?\[([^\]]*?)\\?\](?=\s|$)(.*)$/s;

/** Splits on LF, CRLF or CR (never on other separators, so they stay inside text). */
export const splitLines = (text: string): string[] => text.split(/\r\n|\r|\n/);

/** What one line is: blank, a heading, a task (with its raw text after the marker) or an error. */
export function classifyLine(line: string): MarkdownLine {
  const trimmed = line.trim();
  if (!trimmed) return { kind: "blank" };
  const heading = HEADING.exec(trimmed);
  if (heading) return { kind: "heading", text: heading[1] ?? "" };
  const bullet = BULLET.exec(trimmed);
  if (!bullet) return { kind: "error", message: 'expected a "# phase" heading or a "- [ ] task" line' };
  const marker = MARKER.exec(bullet[1]!);
  if (!marker) return { kind: "error", message: 'a task needs a status marker, like "- [ ] task"' };
  const status = MARKER_STATUS.get(marker[1]!);
  if (!status) return { kind: "error", message: `unknown status marker "[${marker[1]}]"; use [ ], [/], [x] or [-]` };
  return { kind: "task", status, rest: marker[2]! };
}
