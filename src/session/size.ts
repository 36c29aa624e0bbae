/**
 * How big stored things are, in the one unit every memory limit uses: UTF-8
 * bytes of their JSON (what the history API sends, what a JSONL file of the
 * session would hold).
 */

/** UTF-8 bytes of a string. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** UTF-8 bytes of a value's JSON. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? "");
}

/** UTF-8 bytes one UTF-16 code unit of a string adds to the string's JSON (a surrogate pair: 2 for each half). */
function escapedBytes(code: number): number {
  if (code === 0x22 || code === 0x5c) return 2; // \" \\
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  return 3;
}

/**
 * The longest start of `text` whose JSON string body (without the quotes) is
 * at most `maxBytes` UTF-8 bytes. A surrogate pair is never split.
 */
export function jsonPrefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const high = code >= 0xd800 && code <= 0xdbff;
    const low = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    const pair = high && low >= 0xdc00 && low <= 0xdfff;
    // A lone surrogate is written \uXXXX by JSON.stringify; a pair is 4 UTF-8 bytes.
    const cost = pair ? 4 : code >= 0xd800 && code <= 0xdfff ? 6 : escapedBytes(code);
    if (bytes + cost > maxBytes) break;
    bytes += cost;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}
