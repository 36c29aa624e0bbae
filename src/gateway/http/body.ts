import * as nodeStream from "node:stream";
import type { Readable } from "node:stream";

/** Whether a stream has been read from or cancelled (Node has it; its types do not say so). */
const isDisturbed = (nodeStream as unknown as { isDisturbed(stream: ReadableStream): boolean }).isDisturbed;
const NodeReadable = nodeStream.Readable;
import { AbortedError } from "../../errors.js";
import { continueBeforeReading } from "./expect-continue.js";
import type { Headers } from "./headers.js";

/**
 * Where a Request's or Response's body is, kept in the form it came in so that it is converted only if a reader asks
 * for another: the gateway's answers are mostly a string, written to the socket as it is, and a request's body is
 * mostly read once, whole, from Node's stream.
 */
export type BodySource =
  | { kind: "none" }
  | { kind: "text"; text: string }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "stream"; stream: ReadableStream<Uint8Array> }
  /** A request's body still in Node's stream (or read already, as `rawBody`, for a request that waited its turn). */
  | { kind: "incoming"; incoming: Readable & { rawBody?: Buffer } }
  /** Bytes being read, shared by a body and its clone. */
  | { kind: "pending"; bytes: Promise<Uint8Array> }
  /** A body of a kind only Node's own classes encode (a FormData, a Blob): read through one of them. */
  | { kind: "foreign"; response: globalThis.Response };

export interface ExtractedBody {
  source: BodySource;
  /** The Content-Type the standard gives such a body when none is set. */
  contentType?: string;
}

const NONE: BodySource = { kind: "none" };
const decoder = new TextDecoder();

/** The standard's "extract a body" for what a Request or Response may be made with. */
export function extractBody(body: unknown): ExtractedBody {
  if (body === undefined || body === null) return { source: NONE };
  if (typeof body === "string") return { source: { kind: "text", text: body }, contentType: "text/plain;charset=UTF-8" };
  if (body instanceof Uint8Array) return { source: { kind: "bytes", bytes: body } };
  if (body instanceof ArrayBuffer) return { source: { kind: "bytes", bytes: new Uint8Array(body) } };
  if (ArrayBuffer.isView(body)) return { source: { kind: "bytes", bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) } };
  if (body instanceof URLSearchParams) {
    return { source: { kind: "text", text: body.toString() }, contentType: "application/x-www-form-urlencoded;charset=UTF-8" };
  }
  if (typeof (body as ReadableStream).getReader === "function") return { source: { kind: "stream", stream: body as ReadableStream<Uint8Array> } };
  // A FormData, a Blob, an async iterable: rare at the gateway's edge, so Node's own Response encodes it (its
  // multipart boundary, its Blob's type), loading Node's fetch classes only then.
  const response = new globalThis.Response(body as ConstructorParameters<typeof globalThis.Response>[0]);
  const contentType = response.headers.get("content-type");
  return { source: { kind: "foreign", response }, ...(contentType ? { contentType } : {}) };
}

async function readStream(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!(value instanceof Uint8Array)) throw new TypeError("a body's stream gave something other than bytes (a Uint8Array)");
    chunks.push(value);
  }
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/** A request's whole body from Node's stream (by its events: an async iterator costs a turn more microtasks). */
function readIncoming(incoming: Readable & { rawBody?: Buffer }): Promise<Uint8Array> {
  if (incoming.rawBody instanceof Buffer) return Promise.resolve(incoming.rawBody);
  if (incoming.readableEnded) return Promise.reject(new TypeError("Body is unusable: the request's body was read already"));
  continueBeforeReading(incoming);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => chunks.push(chunk);
    const done = (error?: Error) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", gone);
      incoming.off("close", onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    };
    const onEnd = () => done();
    // Closed or failed before its end: the client went away mid-body (or Node's request timeout cut it). Not the
    // gateway's failure: an AbortedError, logged as a client that left.
    const gone = () => done(new AbortedError("the client went away before its request's body was sent"));
    const onClose = () => gone();
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("error", gone);
    incoming.once("close", onClose);
  });
}

/** A body as a stream (null for none). */
export function streamOf(source: BodySource): ReadableStream<Uint8Array> | null {
  switch (source.kind) {
    case "none":
      return null;
    case "stream":
      return source.stream;
    case "incoming":
      if (source.incoming.rawBody instanceof Buffer) return oneChunk(source.incoming.rawBody);
      continueBeforeReading(source.incoming);
      return NodeReadable.toWeb(source.incoming) as ReadableStream<Uint8Array>;
    case "foreign":
      return source.response.body as ReadableStream<Uint8Array> | null;
    case "pending": {
      const { bytes } = source;
      return new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(await bytes);
          controller.close();
        },
      });
    }
    default:
      return oneChunk(source.kind === "text" ? Buffer.from(source.text) : source.bytes);
  }
}

function oneChunk(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** Hands a body over whole (to a Request made from another, or to the socket); the one it came from is used from then on. */
export const takeBody: unique symbol = Symbol("takeBody");

/** What Request and Response share: their body, read once, by one of the standard's methods or as a stream. */
export abstract class Body {
  #source: BodySource;
  #used = false;
  /** The stream `body` gave, once asked for: from then on the body is that stream. */
  #stream: ReadableStream<Uint8Array> | null | undefined;

  protected constructor(source: BodySource) {
    this.#source = source;
  }

  abstract get headers(): Headers;

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#stream !== undefined) return this.#stream;
    const stream = streamOf(this.#source);
    this.#stream = stream;
    if (stream) this.#source = { kind: "stream", stream };
    return stream;
  }

  get bodyUsed(): boolean {
    return this.#used || (this.#stream != null && isDisturbed(this.#stream));
  }

  #take(): BodySource {
    if (this.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
    if (this.#stream?.locked) throw new TypeError("Body is unusable: its stream is locked to a reader");
    this.#used = this.#source.kind !== "none";
    return this.#source;
  }

  async #bytes(): Promise<Uint8Array> {
    const source = this.#take();
    switch (source.kind) {
      case "none":
        return new Uint8Array(0);
      case "text":
        return Buffer.from(source.text);
      case "bytes":
        return source.bytes;
      case "stream":
        return readStream(source.stream);
      case "incoming":
        return readIncoming(source.incoming);
      case "pending":
        return source.bytes;
      case "foreign":
        return new Uint8Array(await source.response.arrayBuffer());
    }
  }

  async text(): Promise<string> {
    const source = this.#source;
    if (source.kind === "text" && this.#stream === undefined) {
      this.#take();
      return source.text;
    }
    return decoder.decode(await this.#bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async bytes(): Promise<Uint8Array> {
    const bytes = await this.#bytes();
    return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer as ArrayBuffer;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get("content-type") ?? "" });
  }

  async formData(): Promise<FormData> {
    // Forms are parsed by Node's own Response (multipart boundaries, charsets): rare here, and its loading waits till then.
    const contentType = this.headers.get("content-type");
    const bytes = await this.bytes();
    return new globalThis.Response(bytes, contentType ? { headers: { "content-type": contentType } } : {}).formData();
  }

  /** A copy's body, given after it is made. */
  protected replaceSource(source: BodySource): void {
    this.#source = source;
    this.#stream = undefined;
    this.#used = false;
  }

  /** The body for a copy of this Request or Response: a stream is split in two, a request's body read once for both. */
  protected cloneSource(): BodySource {
    if (this.bodyUsed) throw new TypeError("Body is unusable: a used body cannot be cloned");
    const source = this.#source;
    switch (source.kind) {
      case "stream": {
        const [mine, theirs] = source.stream.tee();
        this.#source = { kind: "stream", stream: mine };
        if (this.#stream) this.#stream = mine;
        return { kind: "stream", stream: theirs };
      }
      case "incoming": {
        const shared: BodySource = { kind: "pending", bytes: readIncoming(source.incoming) };
        // Read or not, a failed read is the reader's to see, not an unhandled rejection.
        shared.bytes.catch(() => {});
        this.#source = shared;
        return shared;
      }
      case "foreign":
        return { kind: "foreign", response: source.response.clone() };
      default:
        return source;
    }
  }

  [takeBody](): BodySource {
    return this.#take();
  }
}
