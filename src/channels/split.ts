/**
 * Splitting a long text into messages a chat app accepts: at line
 * boundaries, a single longer line cut hard (never inside a UTF-16
 * surrogate pair). A chunk that ends inside a fenced code block gets the
 * fence closed, and the next one opens it again, so each message reads on
 * its own.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})[^`]{0,60}$/;
const CLOSE = "```";

export function splitText(text: string, limit: number): string[] {
  if (text.length <= limit) return text.trim() === "" ? [] : [text];
  // Room for the "\n```" that closes a fence left open at a chunk's end.
  const budget = limit - CLOSE.length - 1;
  const chunks: string[] = [];
  let lines: string[] = [];
  let size = 0;
  /** The fence line that opened the code block the current line is in. */
  let open: string | null = null;
  /** Lines every fresh chunk starts with: the fence line again, inside a code block. */
  let base = 0;

  const push = (line: string) => {
    size += (lines.length > 0 ? 1 : 0) + line.length;
    lines.push(line);
  };
  const flush = () => {
    if (lines.length > base) chunks.push(open ? [...lines, CLOSE].join("\n") : lines.join("\n"));
    lines = [];
    size = 0;
    base = 0;
    if (open) {
      push(open);
      base = 1;
    }
  };

  for (const whole of text.split("\n")) {
    const fence = FENCE.test(whole);
    let line = whole;
    for (;;) {
      const used = lines.length > 0 ? size + 1 : 0;
      if (used + line.length <= budget) {
        push(line);
        break;
      }
      if (lines.length > base && fence && open) {
        // The closing fence itself does not fit: this chunk ends with the code block.
        chunks.push([...lines, CLOSE].join("\n"));
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
      let cut = Math.max(1, budget - used);
      if (cut > 1 && isHighSurrogate(line.charCodeAt(cut - 1))) cut--;
      push(line.slice(0, cut));
      line = line.slice(cut);
      flush();
    }
    if (fence && line !== "") open = open ? null : whole.trim();
  }
  if (lines.length > base) chunks.push(lines.join("\n"));
  return chunks.filter((chunk) => chunk.trim() !== "");
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
