/**
 * A part of a request body that is JSON text already: the tools of an
 * agent's tool set, the same in every call (often most of the body's
 * bytes), are serialized once per set instead of once per call.
 * `JSON.stringify` of a body that holds one still gives the same text, only
 * slower (toJSON parses it back); `bodyBytes` writes it as it is.
 */
export class JsonText {
  constructor(private readonly json: string) {}

  /** The JSON text. */
  get text(): string {
    return this.json;
  }

  /** Bytes of its UTF-8. */
  byteLength(): number {
    return Buffer.byteLength(this.json, "utf8");
  }

  /** Writes its UTF-8 into `into` at `at` (room made by byteLength); returns the bytes written. */
  writeInto(into: Buffer, at: number): number {
    return into.write(this.json, at, "utf8");
  }

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

/**
 * The body's JSON in pieces that, joined, are what `JSON.stringify` writes
 * (each top-level JsonText as the text it holds): `"key":` and its value's
 * text, a `,` between entries, the braces around. A body that is no plain
 * object is one piece.
 */
function bodyPieces(body: unknown): (string | JsonText)[] {
  if (body === null || typeof body !== "object" || Array.isArray(body) || body instanceof JsonText) return [JSON.stringify(body)];
  const pieces: (string | JsonText)[] = ["{"];
  for (const [key, value] of Object.entries(body)) {
    const text = value instanceof JsonText ? value : JSON.stringify(value);
    // As JSON.stringify: a key whose value has no JSON (undefined, a function) is left out.
    if (text === undefined) continue;
    pieces.push(`${pieces.length > 1 ? "," : ""}${JSON.stringify(key)}:`, text);
  }
  pieces.push("}");
  return pieces;
}

/**
 * The body as `JSON.stringify` writes it (each top-level JsonText as the
 * text it holds), in UTF-8 bytes, each piece written straight into one
 * buffer: no string of the whole body is made (the messages' and the
 * tools' texts, most of a request, are copied once, into the bytes sent).
 * The bytes are never changed once written, nor their memory handed over
 * (transferred): a memo of the request copies from them (request-memo.ts).
 */
export function bodyBytes(body: unknown): Buffer {
  const pieces = bodyPieces(body);
  let size = 0;
  for (const piece of pieces) size += typeof piece === "string" ? Buffer.byteLength(piece, "utf8") : piece.byteLength();
  // Its own memory, never a slice of Node's shared pool: a fetch given it (an embedder's) may read `.buffer` whole.
  const bytes = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const piece of pieces) at += typeof piece === "string" ? bytes.write(piece, at, "utf8") : piece.writeInto(bytes, at);
  return bytes;
}
