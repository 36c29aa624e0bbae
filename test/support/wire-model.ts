import { completionChunk } from "./fake-openai.js";
import { within } from "./wait.js";

/**
 * An OpenAI-compatible model reached through an injected `fetch` (the
 * harness's `models: { fetch }`), in-process: the real adapter reads real
 * wire bytes, and the test writes them piece by piece, when it likes. Each
 * call waits until the test answers it. Aborting the call (the turn was
 * stopped) errors its stream, as a dropped connection would.
 */

export interface WireCall {
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  body: any;
  /** Sends one `data:` event (a chunk object, or raw text such as `[DONE]`). */
  send(data: unknown): void;
  /** Streams `text` as one content chunk. */
  text(text: string): void;
  /** Ends the answer: a finish chunk, a usage chunk when given, `[DONE]`. */
  finish(opts?: { reason?: string; usage?: { prompt_tokens: number; completion_tokens: number } }): void;
  /** Whether the caller went away (the turn was aborted). */
  readonly aborted: boolean;
}

export class WireModel {
  readonly calls: WireCall[] = [];
  private waiters: (() => void)[] = [];
  /** For the harness: `models: { fetch: model.fetch }`. */
  readonly fetch: typeof fetch = async (_url, init) => {
    const body = JSON.parse(String(init?.body ?? "{}"));
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let aborted = false;
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    init?.signal?.addEventListener("abort", () => {
      aborted = true;
      controller.error(new DOMException("aborted", "AbortError"));
    });
    const send = (data: unknown) => {
      if (!aborted) controller.enqueue(encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`));
    };
    this.calls.push({
      body,
      send,
      text: (text) => send(completionChunk({ content: text })),
      finish: (opts = {}) => {
        send(completionChunk({}, { finish: opts.reason ?? "stop" }));
        if (opts.usage) send(completionChunk(null, { usage: opts.usage }));
        send("[DONE]");
        if (!aborted) controller.close();
      },
      get aborted() {
        return aborted;
      },
    });
    for (const wake of this.waiters.splice(0)) wake();
    return new Response(stream, { status: 200, headers: { "content-type": "text/event-stream" } });
  };

  /** Resolves with the `count`th call (1-based) once it has arrived (fails, saying how many did, if it does not). */
  async call(count: number): Promise<WireCall> {
    const arrived = async () => {
      while (this.calls.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
    };
    await within(`call ${count} of the wire model`, arrived(), { instead: () => `it got ${this.calls.length}` });
    return this.calls[count - 1]!;
  }
}

/** A config whose default model is served by a WireModel (pass `models: { fetch: model.fetch }` to the harness too). */
export function wireConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agents: { defaults: { model_name: "wire" } },
    model_list: [{ model_name: "wire", provider: "openai", model: "wire-model", api_base: "http://model.invalid/v1", api_key: "sk-wire" }],
    ...extra,
  };
}
