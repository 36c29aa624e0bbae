/**
 * Whether a HEARTBEAT.md holds a task, as PicoClaw decides: a file with
 * PicoClaw's marker line counts only what follows it; without one, the
 * whole file. Blank lines, `#` headings and HTML comments are no task, so
 * an empty file, or the template, costs no model call.
 */

/** The line PicoClaw's template ends with; tasks go below it. */
export const TASK_MARKER = "Add your heartbeat tasks below this line:";

export function heartbeatTasks(text: string): string | undefined {
  const normalized = text.replace(/\r\n?/g, "\n");
  const marker = normalized.indexOf(TASK_MARKER);
  const part = marker >= 0 ? normalized.slice(marker + TASK_MARKER.length) : normalized;
  const withoutComments = part.replace(/<!--[\s\S]*?(-->|$)/g, "");
  const tasks = withoutComments
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "" && !/^\s*#/.test(line));
  return tasks.length > 0 ? tasks.join("\n") : undefined;
}

/** The turn's message: PicoClaw's heartbeat prompt, with the time (UTC) and the tasks. */
export function heartbeatMessage(tasks: string, now: Date): string {
  return [
    "# Heartbeat Check",
    "",
    `Current time: ${now.toISOString().slice(0, 19).replace("T", " ")} UTC`,
    "",
    "This is a scheduled check, not a message from the user. Go through the tasks below and do what they ask that needs doing now.",
    "If nothing needs attention, answer exactly HEARTBEAT_OK and nothing else.",
    "",
    "## Tasks (HEARTBEAT.md)",
    "",
    tasks,
  ].join("\n");
}

/** An answer that means "nothing to tell": it is kept in the history and sent nowhere. */
export const NOTHING_TO_TELL = /^\s*HEARTBEAT_OK\s*$/;
