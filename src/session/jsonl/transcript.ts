import { type ChatMessage, isRecord } from "../../models/message.js";

/**
 * A session's file as text: one OpenAI-style message per line (JSONL), read
 * back forgivingly. Pure: the store reads and writes the files.
 */

/** The lines of `messages`, each ending with a line break. */
export function toLines(messages: readonly ChatMessage[]): string {
  let text = "";
  for (const message of messages) text += `${JSON.stringify(message)}\n`;
  return text;
}

export interface ParsedTranscript {
  messages: ChatMessage[];
  /** Problems met, one sentence each, naming the file and the line. */
  warnings: string[];
  /** Bytes of the file worth keeping: what follows belongs to a write cut short, and is cut off. */
  completeBytes: number;
}

/**
 * The messages of a session file. A line that is not a message (not JSON,
 * or not shaped like one) is skipped; a byte-order mark before the first
 * line is not part of it. What follows the last line break is not a line:
 * - NUL bytes or blanks only (a file system's padding after a crash) are
 *   ignored;
 * - the start of a user message is a turn's write cut short (a crash, a
 *   full disk) before anything of it was complete, and is left out;
 * - anything else is cut short too, and belongs to the last turn's write
 *   unless that turn is complete (its last line is the model's answer, or a
 *   record written on its own): then only the fragment is left out, and
 *   every acknowledged turn is read. Otherwise that turn never finished and
 *   is left out whole (a turn is written at once, starting with its user
 *   message).
 * Each is reported, naming `file` and the line's number (from 1).
 */
export function parseTranscript(whole: string, file: string): ParsedTranscript {
  // A byte-order mark (an editor's) is no part of the first message; its bytes still count in what is kept.
  const bom = whole.startsWith("\uFEFF") ? 1 : 0;
  const text = bom ? whole.slice(bom) : whole;
  const messages: ChatMessage[] = [];
  const warnings: string[] = [];
  const end = text.lastIndexOf("\n") + 1;
  let lineNumber = 0;
  let start = 0;
  /** Where the last user message is (its index in `messages`, its line). */
  let lastUser = { index: -1, line: 0, offset: 0 };
  while (start < end) {
    const lineStart = start;
    const stop = text.indexOf("\n", start);
    const line = text.slice(start, stop);
    start = stop + 1;
    lineNumber++;
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      warnings.push(`${file}: line ${lineNumber} is not JSON (${(error as Error).message}); skipped`);
      continue;
    }
    const problem = messageProblem(value);
    if (problem) {
      warnings.push(`${file}: line ${lineNumber} is not a message (${problem}); skipped`);
      continue;
    }
    if ((value as ChatMessage).role === "user") lastUser = { index: messages.length, line: lineNumber, offset: lineStart };
    messages.push(value as ChatMessage);
  }
  let keep = end;
  if (end < text.length) {
    const torn = text.slice(end);
    const what = `line ${lineNumber + 1} is cut short (${Buffer.byteLength(torn)} bytes without a line break: a write that never finished)`;
    if (/^[\0\s]*$/.test(torn)) warnings.push(`${file}: ends in ${Buffer.byteLength(torn)} bytes of padding after line ${lineNumber}; ignored`);
    else if (/^\{"role":"user"/.test(torn) || lastUser.index < 0 || turnComplete(messages.at(-1))) warnings.push(`${file}: ${what}; left out`);
    else {
      warnings.push(`${file}: ${what}; the turn it belongs to (from line ${lastUser.line}) never finished and is left out`);
      messages.splice(lastUser.index);
      keep = lastUser.offset;
    }
  }
  return { messages, warnings, completeBytes: Buffer.byteLength(whole.slice(0, keep + bom)) };
}

/** Whether a turn's write ended with this message: the model's answer (no calls left to run), or a record, which is written on its own. */
function turnComplete(last: ChatMessage | undefined): boolean {
  if (last === undefined) return false;
  if (last.role === "assistant") return !last.tool_calls?.length;
  return isRecord(last);
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
/** Text, or a list of content parts (text, images). */
const isContent = (value: unknown) => typeof value === "string" || (Array.isArray(value) && value.every(isObject));

/** Why a parsed line is not a message we could send again, or undefined when it is one. */
export function messageProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not an object";
  switch (value.role) {
    case "system":
    case "user":
      return isContent(value.content) ? undefined : "no content";
    case "assistant": {
      if (value.content !== null && value.content !== undefined && !isContent(value.content)) return "bad content";
      if (value.tool_calls === undefined) return undefined;
      if (!Array.isArray(value.tool_calls)) return "bad tool_calls";
      const good = value.tool_calls.every(
        (call) =>
          isObject(call) &&
          typeof call.id === "string" &&
          isObject(call.function) &&
          typeof call.function.name === "string" &&
          typeof call.function.arguments === "string",
      );
      return good ? undefined : "bad tool_calls";
    }
    case "tool":
      return typeof value.tool_call_id === "string" && typeof value.content === "string" ? undefined : "no tool_call_id or content";
    default:
      return `unknown role ${JSON.stringify(value.role)}`;
  }
}

/** The text a tool call gets as its result when none was kept. */
export const LOST_RESULT = "[No result was kept for this call: the session file lost it. Do not assume it ran.]";

/**
 * The conversation made valid for every provider again: a tool result must
 * follow the assistant message that asked for it, and every call must get
 * its result before the conversation goes on. A result with no call before
 * it is dropped; a call whose result is missing (an orphan) gets an error
 * result saying so. Each repair is reported.
 */
export function repairToolPairs(messages: readonly ChatMessage[], file: string): { messages: ChatMessage[]; repairs: string[] } {
  const out: ChatMessage[] = [];
  const repairs: string[] = [];
  /** Calls of the last assistant message still waiting for their results, in order. */
  let waiting: string[] = [];
  const closeWaiting = () => {
    for (const id of waiting) {
      out.push({ role: "tool", tool_call_id: id, content: LOST_RESULT, is_error: true });
      repairs.push(`${file}: the tool call ${id} had no result; an error result says so`);
    }
    waiting = [];
  };
  for (const message of messages) {
    if (message.role === "tool") {
      const at = waiting.indexOf(message.tool_call_id);
      if (at < 0) {
        repairs.push(`${file}: a result for the tool call ${message.tool_call_id} came with no call before it; dropped`);
        continue;
      }
      waiting.splice(at, 1);
      out.push(message);
      continue;
    }
    closeWaiting();
    out.push(message);
    if (message.role === "assistant" && message.tool_calls?.length) waiting = message.tool_calls.map((call) => call.id);
  }
  closeWaiting();
  return { messages: out, repairs };
}
