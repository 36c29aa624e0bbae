import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import type { MetricsRegistry, TokenKind } from "./metrics-registry.js";
import { answeredWithEventStream } from "./sse.js";
import { webResponse } from "./http/response.js";

/**
 * `GET /metrics`: what the runtime's events say (turns, model calls, tools,
 * approvals) and what it holds (sessions, queued turns, open streams), as
 * Prometheus text. The runtime knows nothing of it: this listens to the
 * event bus from the gateway. prom-client is loaded with the first event
 * or the first scrape, not at start-up (it costs some 25 ms); what happens
 * while it loads waits in a bounded list and is counted once it is there.
 */

/** Events recorded while prom-client loads, at most (past it they are dropped, and a warning says so once). */
const MAX_WAITING = 10_000;

export class GatewayMetrics {
  private registry: MetricsRegistry | undefined;
  private loading: Promise<MetricsRegistry> | undefined;
  private waiting: ((registry: MetricsRegistry) => void)[] = [];
  private dropped = false;
  private openStreams = 0;
  private readonly agents: ReadonlySet<string>;
  private readonly stopListening: (() => void)[] = [];

  constructor(
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly load: () => Promise<typeof import("./metrics-registry.js")> = () => import("./metrics-registry.js"),
  ) {
    this.agents = new Set(runtime.agentIds());
    const on = runtime.on.bind(runtime);
    this.stopListening.push(
      on("turn.end", (e) => {
        const agent = this.agent(e.agentId);
        this.record((r) => r.turnEnded(agent, e.outcome, e.durationMs));
      }),
      on("llm.response", (e) => {
        const agent = this.agent(e.agentId);
        const u = e.usage ?? {};
        const tokens: Partial<Record<TokenKind, number>> = {
          input: u.inputTokens,
          output: u.outputTokens,
          cache_read: u.cacheReadInputTokens,
          cache_write: u.cacheCreationInputTokens,
        };
        this.record((r) => r.modelAnswered(agent, e.model, e.durationMs, e.firstTokenMs, tokens));
      }),
      // Tool names are those of the agent's tool set (config, plugins, MCP servers): a call of another name runs nothing and emits no event.
      on("tool.end", (e) => this.record((r) => r.toolEnded(e.tool, e.isError, e.durationMs))),
      on("approval.resolved", (e) => this.record((r) => r.approvalResolved(e.tool, e.decision))),
    );
  }

  /** An agent id as a label: one of the config's (anything else would be a label nobody bounded). */
  private agent(id: string): string {
    return this.agents.has(id) ? id : "other";
  }

  private record(count: (registry: MetricsRegistry) => void): void {
    if (this.registry) {
      count(this.registry);
      return;
    }
    if (this.waiting.length < MAX_WAITING) this.waiting.push(count);
    else if (!this.dropped) {
      this.dropped = true;
      this.logger.warn(`metrics: more than ${MAX_WAITING} events while prom-client loads; the rest are not counted`);
    }
    void this.ready().catch(() => {});
  }

  /** The registry, loaded on first use; what waited is counted into it first. */
  ready(): Promise<MetricsRegistry> {
    this.loading ??= this.load().then(
      ({ MetricsRegistry }) => {
        const registry = new MetricsRegistry({ stats: () => this.runtime.stats(), streams: () => this.openStreams });
        for (const count of this.waiting) count(registry);
        this.waiting = [];
        this.registry = registry;
        return registry;
      },
      (error: unknown) => {
        // The next scrape tries again.
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  /** Stops listening to the runtime's events. */
  close(): void {
    for (const stop of this.stopListening.splice(0)) stop();
  }

  /** `GET /metrics`'s answer: the text format, never cached. */
  async answer(c: Context): Promise<Response> {
    const registry = await this.ready();
    const text = await registry.text();
    return c.body(text, 200, { "content-type": registry.contentType, "cache-control": "no-store" });
  }

  /**
   * Counts the Server-Sent Events answers (streamed turns, OpenAI streams,
   * event streams) while their bodies are open: each one's body is read
   * through a counting stream that pulls only as its client reads.
   */
  countStreams(): MiddlewareHandler {
    return async (c, next) => {
      await next();
      // Only answers their routes made event streams: asking a plain answer for its body would make a stream of it to
      // read back, where the node listener otherwise writes its text as it is.
      // A HEAD's answer is its GET's with the body dropped unread (hono's HEAD): counted, it never went down.
      if (!answeredWithEventStream(c) || c.req.method === "HEAD") return;
      const res = c.res;
      if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return;
      const counted = this.counted(res.body);
      c.res = undefined;
      c.res = webResponse(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }

  private counted(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    this.openStreams++;
    let open = true;
    const closed = () => {
      if (!open) return;
      open = false;
      this.openStreams--;
    };
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) {
              closed();
              controller.close();
            } else controller.enqueue(value);
          } catch (error) {
            closed();
            controller.error(error);
          }
        },
        cancel(reason) {
          closed();
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }
}
