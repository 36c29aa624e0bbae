import { RequestError, messageOf } from "../errors.js";
import { type PathPart, formatPath } from "../validation.js";

/** Refuses bytes that are not UTF-8 (a replacement character would stand in for them, changing what the client sent). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A request's body as JSON: `400 invalid_json` when it is empty, not UTF-8 or not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const bytes = await request.arrayBuffer();
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new RequestError("invalid_json", "the body is not valid UTF-8");
  }
  if (text.trim() === "") throw new RequestError("invalid_json", "the body is empty; expected a JSON object");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RequestError("invalid_json", `the body is not valid JSON: ${messageOf(error)}`);
  }
  // UTF-8 bytes cannot hold half of a UTF-16 pair, but a JSON escape can (`"\ud800"`): such a string is not text,
  // and would be stored, sent to the model and shown as it is. Only a body that has such an escape is looked through.
  if (SURROGATE_ESCAPE.test(text)) {
    const where = loneSurrogateIn(value);
    if (where !== undefined)
      throw new RequestError("invalid_json", `the body is not valid Unicode: ${where} has half of a UTF-16 surrogate pair (a lone \\uD800-\\uDFFF escape)`);
  }
  // What a request carries on is serialized again (a tool's schema for the model, a stored response), and
  // JSON.stringify recurses: a value nested some thousands deep would throw a RangeError there, after the turn ran.
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new RequestError("invalid_json", `the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  return value;
}

/** The most levels of arrays and objects a body may nest (a JSON Schema of some 100 levels still fits). */
const MAX_JSON_DEPTH = 256;

/** Whether valid JSON text nests arrays and objects deeper than `max`: one pass over its characters, strings skipped. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash: the character after it is escaped.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A `\uD800`-`\uDFFF` escape: half of a surrogate pair, which a valid pair also is made of. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Where a value sits in the body: its key or index, and its container's place (undefined at the top). */
type Place = { key: PathPart; up: Place | undefined } | undefined;

function pathOf(place: Place): string {
  const parts: PathPart[] = [];
  for (let at = place; at !== undefined; at = at.up) parts.push(at.key);
  return formatPath(parts.reverse()) || "the body";
}

/**
 * The JSON path of the first string (or key) in `value` that is not well-formed UTF-16, or undefined. Walked with a
 * stack of its own, not recursion, and each value's place linked to its container's, not copied: a body may nest
 * as deep as its bytes allow.
 */
function loneSurrogateIn(value: unknown): string | undefined {
  const stack: [unknown, Place][] = [[value, undefined]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, place] = next;
    if (typeof item === "string") {
      if (!item.isWellFormed()) return pathOf(place);
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], { key: i, up: place }]);
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      for (const [key] of entries) if (!key.isWellFormed()) return `a key of ${pathOf(place)}`;
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], { key: entries[i]![0], up: place }]);
    }
  }
  return undefined;
}
