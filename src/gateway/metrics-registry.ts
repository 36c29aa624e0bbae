import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * The gateway's Prometheus metrics, on a registry of its own (never
 * prom-client's global one), with Node's default collectors (process
 * memory and CPU, heap, event-loop lag) on it too. Loaded with `import()`
 * (see metrics.ts): prom-client costs a start-up some 25 ms. Every label
 * value comes from the config (agent ids, model names, tool names) or a
 * fixed set (outcomes, decisions, token kinds): never a session key or text.
 */

/** What the gauges read when scraped. */
export interface GaugeSources {
  /** Sessions with a history in memory, turns running (sessions with one) and messages waiting for their session's turn. */
  stats(): { sessions: number; runningTurns: number; queuedTurns: number; waitingForPeople: number };
  /** Server-Sent Events answers open now. */
  streams(): number;
}

/** Seconds: a tool-calling turn on a remote model takes seconds to minutes. */
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];
/** Seconds: one model call, or the wait for its first streamed piece. */
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
/** Seconds: a tool call (a file read is milliseconds, an exec or a fetch can take minutes). */
const TOOL_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300];

export type TokenKind = "input" | "output" | "cache_read" | "cache_write";

export class MetricsRegistry {
  readonly registry = new Registry();
  private readonly turns: Counter<"agent" | "outcome">;
  private readonly turnSeconds: Histogram<"agent" | "outcome">;
  private readonly modelCalls: Counter<"agent" | "model">;
  private readonly modelSeconds: Histogram<"agent" | "model">;
  private readonly firstTokenSeconds: Histogram<"agent" | "model">;
  private readonly tokens: Counter<"agent" | "model" | "kind">;
  private readonly toolCalls: Counter<"tool">;
  private readonly toolErrors: Counter<"tool">;
  private readonly toolSeconds: Histogram<"tool">;
  private readonly approvals: Counter<"tool" | "decision">;

  constructor(sources: GaugeSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.turns = new Counter({
      name: "picoclaw_turns_total",
      help: "Turns that ended, by agent and outcome (done, limit, error, aborted).",
      labelNames: ["agent", "outcome"],
      registers,
    });
    this.turnSeconds = new Histogram({
      name: "picoclaw_turn_duration_seconds",
      help: "How long a turn took, from its start to its end (model calls and tools included).",
      labelNames: ["agent", "outcome"],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.modelCalls = new Counter({
      name: "picoclaw_model_calls_total",
      help: "Model calls answered, by agent and the model_name that answered.",
      labelNames: ["agent", "model"],
      registers,
    });
    this.modelSeconds = new Histogram({
      name: "picoclaw_model_call_duration_seconds",
      help: "How long a model call took, from the request to the whole answer.",
      labelNames: ["agent", "model"],
      buckets: MODEL_BUCKETS,
      registers,
    });
    this.firstTokenSeconds = new Histogram({
      name: "picoclaw_model_time_to_first_token_seconds",
      help: "From a model request to the first piece it streamed (text, reasoning or a tool call).",
      labelNames: ["agent", "model"],
      buckets: MODEL_BUCKETS,
      registers,
    });
    this.tokens = new Counter({
      name: "picoclaw_model_tokens_total",
      help: "Tokens the model reported, by kind: input, output, cache_read, cache_write.",
      labelNames: ["agent", "model", "kind"],
      registers,
    });
    this.toolCalls = new Counter({ name: "picoclaw_tool_calls_total", help: "Tool calls that ran, by tool.", labelNames: ["tool"], registers });
    this.toolErrors = new Counter({
      name: "picoclaw_tool_errors_total",
      help: "Tool calls whose result was an error, by tool.",
      labelNames: ["tool"],
      registers,
    });
    this.toolSeconds = new Histogram({
      name: "picoclaw_tool_call_duration_seconds",
      help: "How long a tool call ran.",
      labelNames: ["tool"],
      buckets: TOOL_BUCKETS,
      registers,
    });
    this.approvals = new Counter({
      name: "picoclaw_approvals_total",
      help: "Approval requests decided, by tool and decision (allow, deny, allow_session).",
      labelNames: ["tool", "decision"],
      registers,
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge("picoclaw_sessions_active", "Sessions with a history in memory.", () => sources.stats().sessions);
    gauge("picoclaw_turns_running", "Sessions with a turn running now.", () => sources.stats().runningTurns);
    gauge("picoclaw_turns_queued", "Messages waiting for their session's turn before them.", () => sources.stats().queuedTurns);
    gauge("picoclaw_approvals_waiting", "Tool calls and questions waiting for a person now.", () => sources.stats().waitingForPeople);
    gauge("picoclaw_sse_streams_open", "Server-Sent Events answers and event streams open now.", () => sources.streams());
  }

  turnEnded(agent: string, outcome: string, durationMs: number): void {
    this.turns.inc({ agent, outcome });
    this.turnSeconds.observe({ agent, outcome }, durationMs / 1000);
  }

  modelAnswered(agent: string, model: string, durationMs: number, firstTokenMs: number | undefined, tokens: Partial<Record<TokenKind, number>>): void {
    this.modelCalls.inc({ agent, model });
    this.modelSeconds.observe({ agent, model }, durationMs / 1000);
    if (firstTokenMs !== undefined) this.firstTokenSeconds.observe({ agent, model }, firstTokenMs / 1000);
    for (const [kind, count] of Object.entries(tokens)) if (count !== undefined && count > 0) this.tokens.inc({ agent, model, kind }, count);
  }

  toolEnded(tool: string, isError: boolean, durationMs: number): void {
    this.toolCalls.inc({ tool });
    if (isError) this.toolErrors.inc({ tool });
    this.toolSeconds.observe({ tool }, durationMs / 1000);
  }

  approvalResolved(tool: string, decision: string): void {
    this.approvals.inc({ tool, decision });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
