/**
 * A note cut into passages for search: its paragraphs (lines between blank
 * lines), each with the line it starts on. A heading starts a passage of
 * its own, so a hit points at the section it is in. A paragraph longer than
 * MAX_PASSAGE_LINES is cut into several.
 */

export interface Passage {
  /** 1-based line of its first line. */
  line: number;
  text: string;
}

const MAX_PASSAGE_LINES = 20;

export function passagesOf(text: string): Passage[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const passages: Passage[] = [];
  let start = -1;
  let block: string[] = [];
  const flush = () => {
    if (block.length > 0 && block.some((line) => line.trim() !== "")) passages.push({ line: start + 1, text: block.join("\n").trim() });
    block = [];
    start = -1;
  };
  lines.forEach((line, i) => {
    if (line.trim() === "") {
      flush();
      return;
    }
    if (/^#{1,6}\s/.test(line) || block.length >= MAX_PASSAGE_LINES) flush();
    if (start < 0) start = i;
    block.push(line);
  });
  flush();
  return passages;
}

/** A passage as a hit shows it: one line, at most `max` characters. */
export function excerptOf(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
