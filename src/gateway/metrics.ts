import type { Context, MiddlewareHandler } from "hono";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime/runtime.js";
import { webResponse } from "./http/response.js";
import type { MetricsRegistry } from "./metrics-registry.js";
import { CounterTally, HistogramTally, gaugeText } from "./metrics-tally.js";
import { answeredWithEventStream } from "./sse.js";

/**
 * `GET /metrics`: what the runtime's events say (turns, model calls, tools,
 * approvals) and what it holds (sessions, queued turns, open streams), as
 * Prometheus text. The runtime knows nothing of it: this listens to the
 * event bus from the gateway. The gateway's series are counted in plain
 * maps from the first event on (metrics-tally.ts); prom-client, which adds
 * Node's own metrics, is loaded with the first scrape, not before.
 */

export type TokenKind = "input" | "output" | "cache_read" | "cache_write";

/** Seconds: a tool-calling turn on a remote model takes seconds to minutes. */
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
/** Seconds: one model call, or the wait for its first streamed piece. */
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** Seconds: a tool call (a file read is milliseconds, an exec or a fetch can take minutes). */
const TOOL_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300];

/** The text format's content type, for an answer without prom-client's registry (it failed to load). */
const TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8";

export class GatewayMetrics {
  private loading: Promise<MetricsRegistry> | undefined;
  private openStreams = 0;
  private readonly agents: ReadonlySet<string>;
  private readonly stopListening: (() => void)[] = [];
  private readonly turns = new CounterTally("picoclaw_turns_total", "Turns that ended, by agent and outcome (done, limit, error, aborted).", [
    "agent",
    "outcome",
  ]);
  private readonly turnSeconds = new HistogramTally(
    "picoclaw_turn_duration_seconds",
    "How long a turn took, from its start to its end (model calls and tools included).",
    ["agent", "outcome"],
    TURN_BUCKETS,
  );
  private readonly modelCalls = new CounterTally("picoclaw_model_calls_total", "Model calls answered, by agent and the model_name that answered.", [
    "agent",
    "model",
  ]);
  private readonly modelSeconds = new HistogramTally(
    "picoclaw_model_call_duration_seconds",
    "How long a model call took, from the request to the whole answer.",
    ["agent", "model"],
    MODEL_BUCKETS,
  );
  private readonly firstTokenSeconds = new HistogramTally(
    "picoclaw_model_time_to_first_token_seconds",
    "From a model request to the first piece it streamed (text, reasoning or a tool call).",
    ["agent", "model"],
    MODEL_BUCKETS,
  );
  private readonly tokens = new CounterTally("picoclaw_model_tokens_total", "Tokens the model reported, by kind: input, output, cache_read, cache_write.", [
    "agent",
    "model",
    "kind",
  ]);
  private readonly toolCalls = new CounterTally("picoclaw_tool_calls_total", "Tool calls that ran, by tool.", ["tool"]);
  private readonly toolErrors = new CounterTally("picoclaw_tool_errors_total", "Tool calls whose result was an error, by tool.", ["tool"]);
  private readonly toolSeconds = new HistogramTally("picoclaw_tool_call_duration_seconds", "How long a tool call ran.", ["tool"], TOOL_BUCKETS);
  private readonly approvals = new CounterTally("picoclaw_approvals_total", "Approval requests decided, by tool and decision (allow, deny, allow_session).", [
    "tool",
    "decision",
  ]);

  constructor(
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly load: () => Promise<typeof import("./metrics-registry.js")> = () => import("./metrics-registry.js"),
  ) {
    this.agents = new Set(runtime.agentIds());
    const on = runtime.on.bind(runtime);
    this.stopListening.push(
      on("turn.end", (e) => {
        const labels = { agent: this.agent(e.agentId), outcome: e.outcome };
        this.turns.inc(labels);
        this.turnSeconds.observe(labels, e.durationMs / 1000);
      }),
      on("llm.response", (e) => {
        const labels = { agent: this.agent(e.agentId), model: e.model };
        const u = e.usage ?? {};
        const tokens: Partial<Record<TokenKind, number>> = {
          input: u.inputTokens,
          output: u.outputTokens,
          cache_read: u.cacheReadInputTokens,
          cache_write: u.cacheCreationInputTokens,
        };
        this.modelCalls.inc(labels);
        this.modelSeconds.observe(labels, e.durationMs / 1000);
        if (e.firstTokenMs !== undefined) this.firstTokenSeconds.observe(labels, e.firstTokenMs / 1000);
        for (const [kind, count] of Object.entries(tokens)) if (count !== undefined && count > 0) this.tokens.inc({ ...labels, kind }, count);
      }),
      // Tool names are those of the agent's tool set (config, plugins, MCP servers): a call of another name runs nothing and emits no event.
      on("tool.end", (e) => {
        this.toolCalls.inc({ tool: e.tool });
        if (e.isError) this.toolErrors.inc({ tool: e.tool });
        this.toolSeconds.observe({ tool: e.tool }, e.durationMs / 1000);
      }),
      on("approval.resolved", (e) => this.approvals.inc({ tool: e.tool, decision: e.decision })),
    );
  }

  /** An agent id as a label: one of the config's (anything else would be a label nobody bounded). */
  private agent(id: string): string {
    return this.agents.has(id) ? id : "other";
  }

  /** prom-client's registry of Node's own metrics, loaded on first use (the first scrape). */
  ready(): Promise<MetricsRegistry> {
    this.loading ??= this.load().then(
      ({ MetricsRegistry }) => new MetricsRegistry(),
      (error: unknown) => {
        // The next scrape tries again.
        this.loading = undefined;
        this.logger.warn(`metrics: prom-client did not load (${error instanceof Error ? error.message : String(error)}); the next scrape tries again`);
        throw error;
      },
    );
    return this.loading;
  }

  /** The gateway's own series and gauges, as Prometheus text. */
  ownText(): string {
    const stats = this.runtime.stats();
    return [
      this.turns.text(),
      this.turnSeconds.text(),
      this.modelCalls.text(),
      this.modelSeconds.text(),
      this.firstTokenSeconds.text(),
      this.tokens.text(),
      this.toolCalls.text(),
      this.toolErrors.text(),
      this.toolSeconds.text(),
      this.approvals.text(),
      gaugeText("picoclaw_sessions_active", "Sessions with a history in memory.", stats.sessions),
      gaugeText("picoclaw_turns_running", "Sessions with a turn running now.", stats.runningTurns),
      gaugeText("picoclaw_turns_queued", "Messages waiting for their session's turn before them.", stats.queuedTurns),
      gaugeText("picoclaw_approvals_waiting", "Tool calls and questions waiting for a person now.", stats.waitingForPeople),
      gaugeText("picoclaw_sse_streams_open", "Server-Sent Events answers and event streams open now.", this.openStreams),
    ].join("");
  }

  /** Stops listening to the runtime's events. */
  close(): void {
    for (const stop of this.stopListening.splice(0)) stop();
  }

  /** `GET /metrics`'s answer: the text format, never cached. */
  async answer(c: Context): Promise<Response> {
    // Without prom-client (it failed to load: said once in the log, tried again at the next scrape), the gateway's own series.
    const registry = await this.ready().catch(() => undefined);
    const text = this.ownText() + (registry ? await registry.text() : "");
    return c.body(text, 200, { "content-type": registry?.contentType ?? TEXT_FORMAT, "cache-control": "no-store" });
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
