/**
 * Splitting a long text into messages a chat app accepts: at line
 * boundaries, a single longer line cut hard (never inside a UTF-16
 * surrogate pair). A chunk that ends inside a fenced code block gets the
 * fence closed (with the fence it was opened with: ``` or ~~~, as long),
 * and the next one opens it again (with its info string: ```ts), so each
 * message reads on its own.
 */

/** A fence line: up to 3 spaces, 3 or more backticks or tildes, then an info string (a backtick fence's has no backtick). */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
/** The shortest fence, which a chunk always keeps room for. */
const MIN_FENCE = 3;

interface Fence {
  /** The line that opened it, trimmed (opens it again in the next chunk). */
  line: string;
  /** Its backticks or tildes: what closes it. */
  run: string;
}

/** The fence a line opens, if it is one. */
function opening(line: string): Fence | null {
  const match = FENCE.exec(line);
  if (!match) return null;
  const run = match[1]!;
  if (run.startsWith("`") && match[2]!.includes("`")) return null;
  return { line: line.trim(), run };
}

/** Whether a line closes `open`: the same character, at least as many, nothing after them. */
function closes(line: string, open: Fence): boolean {
  const match = FENCE.exec(line);
  return match !== null && match[1]![0] === open.run[0] && match[1]!.length >= open.run.length && match[2]!.trim() === "";
}

export function splitText(text: string, limit: number): string[] {
  if (text.length <= limit) return text.trim() === "" ? [] : [text];
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  /** The code block the current line is in. */
  let open: Fence | null = null;
  /** Lines every fresh chunk starts with: the fence line again, inside a code block. */
  let base = 0;
  /** Room for a chunk's text: what is left after the "\n" and fence that may have to close it. */
  const budget = (fence: Fence | null) => limit - Math.max(MIN_FENCE, fence?.run.length ?? 0) - 1;

  const push = (line: string) => {
    size += (lines.length > 0 ? 1 : 0) + line.length;
    lines.push(line);
  };
  const flush = () => {
    if (lines.length > base) chunks.push(open ? [...lines, open.run].join("\n") : lines.join("\n"));
    lines = [];
    size = 0;
    base = 0;
    if (open) {
      push(open.line);
      base = 1;
    }
  };

  for (const whole of text.split("\n")) {
    const closing: boolean = open !== null && closes(whole, open);
    const opens: Fence | null = open === null ? opening(whole) : null;
    let line = whole;
    for (;;) {
      const used = lines.length > 0 ? size + 1 : 0;
      if (used + line.length <= budget(opens ?? open)) {
        push(line);
        break;
      }
      if (lines.length > base && closing && open) {
        // The closing fence itself does not fit: this chunk ends with the code block.
        chunks.push([...lines, open.run].join("\n"));
        lines = [];
        size = 0;
        base = 0;
        open = null;
        line = "";
        break;
      }
      if (lines.length > base) {
        flush();
        continue;
      }
      let cut = Math.max(1, budget(opens ?? open) - used);
      if (cut > 1 && isHighSurrogate(line.charCodeAt(cut - 1))) cut--;
      push(line.slice(0, cut));
      line = line.slice(cut);
      flush();
    }
    if (line === "") continue;
    if (closing) open = null;
    else if (opens) open = opens;
  }
  if (lines.length > base) chunks.push(lines.join("\n"));
  return chunks.filter((chunk) => chunk.trim() !== "");
}

/**
 * The messages a text goes as: split to `limit`, at most `maxMessages` of
 * them (the last one then says how much was left out).
 */
export function splitMessages(text: string, limit: number, maxMessages: number): string[] {
  const chunks = splitText(text, limit);
  if (chunks.length <= maxMessages) return chunks;
  const left = chunks.slice(maxMessages - 1).reduce((sum, chunk) => sum + chunk.length, 0);
  return [...chunks.slice(0, maxMessages - 1), `[The rest of this answer, ${left} characters, was not sent: it is too long for a chat.]`];
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
