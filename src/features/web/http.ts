import type { Dispatcher } from "undici";

/**
 * The HTTP both web tools speak: undici's `request` on an Agent of their
 * own (loaded with the first call: a gateway that never fetches or
 * searches does not load undici for them), bodies read chunk by chunk
 * up to a cap and never past it.
 */

export type Undici = typeof import("undici");

let loading: Promise<Undici> | undefined;

/** undici, loaded on first use (it is CommonJS: its exports are the namespace's `default` in the bundle). */
export function undici(): Promise<Undici> {
  loading ??= import("undici").then((loaded) => (loaded.default ?? loaded) as unknown as Undici);
  return loading;
}

/** What came back: the status, the headers, and at most the cap of the body. */
export interface Answer {
  readonly status: number;
  header(name: string): string | undefined;
  readonly body: Buffer;
  /** Whether the body went on past the cap (the rest was not read). */
  readonly cut: boolean;
}

export interface Ask {
  readonly url: URL;
  readonly method?: "GET" | "POST";
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly signal: AbortSignal;
  /** Bytes of the body read at most. */
  readonly maxBytes: number;
  /** When this says so for an answer (a redirect), its body is not read at all. */
  readonly skipBody?: (status: number, header: (name: string) => string | undefined) => boolean;
}

export function headerOf(headers: Dispatcher.ResponseData["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** One request (no redirect followed) and its answer, the body read up to `maxBytes`. */
export async function ask(dispatcher: Dispatcher, request: Ask): Promise<Answer> {
  const answer = await dispatcher.request({
    origin: request.url.origin,
    path: `${request.url.pathname}${request.url.search}`,
    method: request.method ?? "GET",
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: request.signal,
  });
  const header = (name: string) => headerOf(answer.headers, name);
  if (request.skipBody?.(answer.statusCode, header)) {
    discard(answer.body);
    return { status: answer.statusCode, header, body: Buffer.alloc(0), cut: false };
  }
  const { bytes, cut } = await readAtMost(answer.body, request.maxBytes);
  return { status: answer.statusCode, header, body: bytes, cut };
}

/** Reads a body up to `maxBytes`; past it the rest is not read (the connection is dropped). */
export async function readAtMost(body: Dispatcher.ResponseData["body"], maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const parts: Buffer[] = [];
  let held = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (held + chunk.length > maxBytes) {
      parts.push(chunk.subarray(0, maxBytes - held));
      discard(body);
      return { bytes: Buffer.concat(parts), cut: true };
    }
    parts.push(chunk);
    held += chunk.length;
  }
  return { bytes: Buffer.concat(parts), cut: false };
}

/** Stops reading a body: its connection is dropped, and the abort this makes is no error of anyone's. */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => {});
  body.destroy();
}

/** The words for an error of a request that failed (no answer): its code and message, and its cause's. */
export function failure(error: unknown): string {
  const seen: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 3; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    const text = code && !current.message.includes(code) ? `${current.message} (${code})` : current.message;
    if (text && !seen.includes(text)) seen.push(text);
    current = current.cause;
  }
  return seen.join(": ") || String(error);
}
