/**
 * A part of a request body that is JSON text already: the tools of an
 * agent's tool set, the same in every call (often most of the body's
 * bytes), are serialized once per set instead of once per call.
 * `JSON.stringify` of a body that holds one still gives the same text, only
 * slower (toJSON parses it back); `bodyText` writes it as it is.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** JSON text per object (a tool set's specs, made once per set): `make` runs once for each `key` while it is alive. */
export function jsonTextFor<K extends object>(cache: WeakMap<K, JsonText>, key: K, make: (key: K) => unknown): JsonText {
  let text = cache.get(key);
  if (!text) {
    text = new JsonText(JSON.stringify(make(key)));
    cache.set(key, text);
  }
  return text;
}

/** The body as `JSON.stringify` writes it, with each top-level JsonText written as the text it holds. */
export function bodyText(body: unknown): string {
  if (body === null || typeof body !== "object" || Array.isArray(body) || body instanceof JsonText) return JSON.stringify(body);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    const text = value instanceof JsonText ? value.text : JSON.stringify(value);
    // As JSON.stringify: a key whose value has no JSON (undefined, a function) is left out.
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  if (parts.length === 0) return "{}";
  // The braces go into the first and last parts, so that the one join makes the whole body a flat string: a "{" and
  // "}" added around it would make a string of three pieces, which its byte length and its write each flatten again.
  parts[0] = `{${parts[0]}`;
  parts[parts.length - 1] = `${parts[parts.length - 1]}}`;
  return parts.join(",");
}
