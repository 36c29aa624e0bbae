import { type Id, tooLargeError } from "./message-size.js";

/** The ids of the requests in a JSON-RPC POST body (one message or a batch). */
function requestIds(body: unknown): Id[] {
  if (typeof body !== "string") return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m: { id?: unknown; method?: unknown }) =>
      typeof m?.method === "string" && (typeof m.id === "number" || typeof m.id === "string") ? [m.id] : [],
    );
  } catch {
    return [];
  }
}

/** Reads at most `maxBytes` of a body; `complete` is false when there was more (the rest is not read). */
async function readAtMost(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ bytes: Uint8Array; complete: boolean; seen: number }> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let seen = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return { bytes: Buffer.concat(parts), complete: true, seen };
      seen += chunk.value.byteLength;
      if (seen > maxBytes) {
        await reader.cancel().catch(() => {});
        return { bytes: Buffer.concat(parts), complete: false, seen };
      }
      parts.push(chunk.value);
    }
  } finally {
    reader.releaseLock();
  }
}

/** The same answer with another body (the length header dropped: the body may be shorter). */
function withBody(response: Response, body: ConstructorParameters<typeof Response>[0]): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}

/** An error body past this is not read: the SDK only quotes it. */
const ERROR_BODY_BYTES = 4 * 1024;

/**
 * A `fetch` for the SDK's streamable HTTP transport that holds no message
 * over `maxBytes`: a JSON answer over it is replaced by the stand-in error
 * for the POST's request; in an SSE stream, an event over it is skipped and,
 * on a POST's stream, replaced by the stand-in error; an error body is read
 * only up to a few KB. `dropped` hears of what could be given to no request.
 */
export function limitedFetch(maxBytes: number, dropped: (bytes: number) => void, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    if (!response.ok) {
      const { bytes } = await readAtMost(response.body, ERROR_BODY_BYTES);
      return withBody(response, bytes);
    }
    const ids = requestIds(init?.body);
    const type = (response.headers.get("content-type") ?? "").toLowerCase();
    if (type.includes("text/event-stream")) return withBody(response, response.body.pipeThrough(sseLimiter(maxBytes, ids, dropped)));
    if (!type.includes("application/json")) return response;
    const read = await readAtMost(response.body, maxBytes);
    if (read.complete) return withBody(response, read.bytes);
    if (ids.length === 0) {
      dropped(read.seen);
      return withBody(response, "[]");
    }
    const errors = ids.map((id) => tooLargeError(id, maxBytes));
    return withBody(response, JSON.stringify(errors.length === 1 ? errors[0] : errors));
  };
}

/**
 * Passes server-sent events through unchanged while each is within
 * `maxBytes`; an event over it is read past, and in its place comes the
 * stand-in error for `ids[0]` (the POST's request), once.
 */
function sseLimiter(maxBytes: number, ids: readonly Id[], dropped: (bytes: number) => void): TransformStream<Uint8Array, Uint8Array> {
  let event: Uint8Array[] = [];
  let eventBytes = 0;
  let skipped: number | undefined;
  let lineHasText = false;
  let answered = false;
  const endEvent = (out: TransformStreamDefaultController<Uint8Array>) => {
    if (skipped !== undefined) {
      const id = answered ? undefined : ids[0];
      if (id === undefined) dropped(skipped);
      else {
        answered = true;
        out.enqueue(Buffer.from(`event: message\ndata: ${JSON.stringify(tooLargeError(id, maxBytes, skipped))}\n\n`));
      }
    } else if (event.length > 0) {
      out.enqueue(Buffer.concat(event));
    }
    event = [];
    eventBytes = 0;
    skipped = undefined;
  };
  return new TransformStream({
    transform(chunk, out) {
      let start = 0;
      while (start < chunk.length) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(start, end);
        let text = piece.length;
        if (text > 0 && piece[text - 1] === 0x0a) text--;
        if (text > 0 && piece[text - 1] === 0x0d) text--;
        if (text > 0) lineHasText = true;
        if (skipped !== undefined) skipped += piece.length;
        else if (eventBytes + piece.length > maxBytes) {
          skipped = eventBytes + piece.length;
          event = [];
        } else {
          event.push(piece);
          eventBytes += piece.length;
        }
        if (newline !== -1) {
          // A blank line ends an event.
          if (!lineHasText) endEvent(out);
          lineHasText = false;
        }
        start = end;
      }
    },
    flush(out) {
      endEvent(out);
    },
  });
}
