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
  return value;
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
