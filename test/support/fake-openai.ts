import { type IncomingHttpHeaders, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire
 * format, with scripted replies. It records every request it receives so
 * tests can assert on headers, body shape and message order.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint: wire JSON is untyped by nature
  body: any;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (wins over json). */
  text?: string;
  /** Server-sent events: each string is written as one chunk, as it is. */
  chunks?: string[];
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
    const recorded: RecordedRequest = { method, path, headers, body };
    this.requests.push(recorded);
    const index = this.requests.length - 1;
    const reply = this.handler
      ? await this.handler(recorded, index)
      : (this.queue.shift() ?? { status: 500, json: { error: { message: "the fake server has no scripted reply left" } } });
    let closed = false;
    res.on("close", () => (closed = true));
    if (reply.delayMs) await sleep(reply.delayMs, () => closed);
    if (closed) return;
    if (reply.destroy) {
      res.socket?.destroy();
      return;
    }
    if (reply.chunks) {
      res.writeHead(reply.status ?? 200, { "content-type": "text/event-stream", ...reply.headers });
      for (const chunk of reply.chunks) {
        if (closed) return;
        res.write(chunk);
        if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs, () => closed);
      }
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

/** The messages of the last request that ended in a tool message, for a tool result lookup. */
// biome-ignore lint: wire JSON
export function lastToolMessages(request: RecordedRequest): any[] {
  // biome-ignore lint: wire JSON
  const messages: any[] = request.body?.messages ?? [];
  const out = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === "tool"; i--) out.unshift(messages[i]);
  return out;
}
