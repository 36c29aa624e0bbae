/**
 * Text rules both todo styles share: sizes count UTF-8 bytes, "blank" means
 * only Unicode White_Space characters (U+200B is not one), and a task's
 * visible text is one clean line.
 */

/** Items (list) or tasks (phases) one plan holds at most. */
export const MAX_TODOS = 100;
/** Bytes of one item's or task's text at most. */
export const MAX_CONTENT_BYTES = 1024;

/** Only characters with the Unicode White_Space property. */
export const BLANK = /^\p{White_Space}*$/u;

const encoder = new TextEncoder();

/** UTF-8 byte length without allocating for pure-ASCII strings. */
export function utf8Length(text: string): number {
  // A UTF-16 unit is at least one byte; only a non-ASCII unit can add more.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, control characters included, is one byte each
  if (/^[\x00-\x7f]*$/.test(text)) return text.length;
  return encoder.encode(text).length;
}

/** One line, no outer spaces: line breaks (and the spaces around them) become one space, then trimmed. */
export function cleanText(text: string): string {
  return text.replace(/\s*[\r\n\u0085\u2028\u2029]+\s*/g, " ").trim();
}
