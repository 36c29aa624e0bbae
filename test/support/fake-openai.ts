import { type IncomingHttpHeaders, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire
 * format, with scripted replies. It records every request it receives so
 * tests can assert on headers, body shape and message order.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON is untyped by nature
  body: any;
  /** Settles when the connection of this request closes; `complete` is false when the client went away first. */
  closed: Promise<{ complete: boolean }>;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (wins over json). */
  text?: string;
  /** Server-sent events: each string (or raw bytes) is written as one chunk, as it is. */
  chunks?: (string | Uint8Array)[];
  /** Awaited before chunk `index` is written (lets a test prove pieces are handed on as they arrive). */
  beforeChunk?: (index: number) => Promise<void> | void;
  /** After the last chunk, keep the connection open until the client closes it (a stalled stream). */
  hold?: boolean;
  /** Wait before answering (the request's close cancels the wait). */
  delayMs?: number;
  /** Pause between chunks. */
  chunkDelayMs?: number;
  /** Drop the connection without answering. */
  destroy?: boolean;
}

export type Handler = (request: RecordedRequest, index: number) => Reply | Promise<Reply>;

export class FakeModelServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Reply[] = [];
  private handler: Handler | undefined;

  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  /** `http://127.0.0.1:PORT/v1`, the api_base to configure. */
  get url(): string {
    return `${this.origin}/v1`;
  }

  static async start(handler?: Handler): Promise<FakeModelServer> {
    let self: FakeModelServer | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => void self!.answer(req.method ?? "", req.url ?? "", req.headers, Buffer.concat(parts).toString("utf8"), res));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    self = new FakeModelServer(server, `http://127.0.0.1:${port}`);
    self.handler = handler;
    return self;
  }

  /** Replies used in order by requests (when no handler is set). */
  enqueue(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  setHandler(handler: Handler): void {
    this.handler = handler;
  }

  /** Drops every open connection at once (a server or proxy dying mid-answer). */
  dropConnections(): void {
    this.server.closeAllConnections();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(method: string, path: string, headers: IncomingHttpHeaders, raw: string, res: ServerResponse) {
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // keep the raw text
    }
    let closed = false;
    const closedPromise = new Promise<{ complete: boolean }>((resolve) =>
      res.on("close", () => {
        closed = true;
        resolve({ complete: res.writableFinished });
      }),
    );
    const recorded: RecordedRequest = { method, path, headers, body, closed: closedPromise };
    this.requests.push(recorded);
    const index = this.requests.length - 1;
    const reply = this.handler
      ? await this.handler(recorded, index)
      : (this.queue.shift() ?? { status: 500, json: { error: { message: "the fake server has no scripted reply left" } } });
    if (reply.delayMs) await sleep(reply.delayMs, () => closed);
    if (closed) return;
    if (reply.destroy) {
      res.socket?.destroy();
      return;
    }
    if (reply.chunks) {
      res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
      for (const [i, chunk] of reply.chunks.entries()) {
        if (reply.beforeChunk) await reply.beforeChunk(i);
        if (closed) return;
        res.write(chunk);
        if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs, () => closed);
      }
      if (reply.hold) return;
      res.end();
      return;
    }
    const text = reply.text ?? JSON.stringify(reply.json ?? {});
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(text);
  }
}

function sleep(ms: number, stop: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    const tick = () => (stop() || Date.now() - started >= ms ? resolve() : setTimeout(tick, Math.min(10, ms)));
    tick();
  });
}

let completionCounter = 0;

/** A chat completion answering with text. */
export function textCompletion(content: string, extra: Record<string, unknown> = {}): Reply {
  return {
    json: {
      id: `chatcmpl-${++completionCounter}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      ...extra,
    },
  };
}

/** A chat completion calling tools. `args` objects are sent as JSON strings, as OpenAI does. */
export function toolCallCompletion(calls: { name: string; args: unknown; id?: string }[], content: string | null = null): Reply {
  return {
    json: {
      id: `chatcmpl-${++completionCounter}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: "fake-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content,
            refusal: null,
            tool_calls: calls.map((call, i) => ({
              id: call.id ?? `call_${completionCounter}_${i}`,
              type: "function",
              function: { name: call.name, arguments: typeof call.args === "string" ? call.args : JSON.stringify(call.args) },
            })),
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

/** One SSE event per value (`data: <json>`), then `data: [DONE]` unless `done` is false: OpenAI's streaming format. */
export function sseChunks(events: unknown[], opts: { done?: boolean } = {}): string[] {
  const chunks = events.map((event) => `data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`);
  if (opts.done !== false) chunks.push("data: [DONE]\n\n");
  return chunks;
}

/** A chat.completion.chunk around one delta (or a usage-only chunk when `delta` is null). */
export function completionChunk(
  delta: Record<string, unknown> | null,
  opts: { finish?: string | null; usage?: { prompt_tokens: number; completion_tokens: number } } = {},
): Record<string, unknown> {
  return {
    id: "chatcmpl-stream",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "fake-model",
    choices: delta === null ? [] : [{ index: 0, delta, logprobs: null, finish_reason: opts.finish ?? null }],
    ...(opts.usage ? { usage: { ...opts.usage, total_tokens: opts.usage.prompt_tokens + opts.usage.completion_tokens } } : {}),
  };
}

/** Splits text into chunks at the given byte offsets (to cut JSON values and UTF-8 characters in half). */
export function splitBytes(text: string, ...offsets: number[]): Uint8Array[] {
  const bytes = Buffer.from(text, "utf8");
  const out: Uint8Array[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.length]) {
    out.push(bytes.subarray(start, offset));
    start = offset;
  }
  return out;
}

/** The messages of the last request that ended in a tool message, for a tool result lookup. */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON
export function lastToolMessages(request: RecordedRequest): any[] {
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  const messages: any[] = request.body?.messages ?? [];
  const out = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === "tool"; i--) out.unshift(messages[i]);
  return out;
}

/** Fake model servers for one test file: the function returned starts one, and each is closed after its test. */
export function fakeModelServers(): (handler: Handler) => Promise<FakeModelServer> {
  const servers: FakeModelServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  return async (handler) => {
    const server = await FakeModelServer.start(handler);
    servers.push(server);
    return server;
  };
}

/** The last user message a recorded model request was made for. */
export const askedFor = (request: RecordedRequest): string =>
  (request.body.messages as { role: string; content: string }[]).findLast((m) => m.role === "user")!.content;
