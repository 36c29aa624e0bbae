import { type Attributes, ROOT_CONTEXT, type Span, type SpanContext, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { Logger } from "../log.js";
import type { EventBus } from "../port/events.js";

/**
 * OpenTelemetry spans made from the runtime's events, the way the metrics
 * listen to them: the runtime knows nothing of traces. One span per turn
 * (a root span, or for a subagent's turn a child of the parent's tool call
 * that started it), per model call (the GenAI semantic conventions'
 * `chat <model>`) and per tool call (`execute_tool <tool>`). No message,
 * reply or tool text goes into a span unless `captureContent` says so.
 * This file and the SDK's (tracing-sdk.ts) are loaded only when an OTLP
 * endpoint is configured.
 */

/** What a config's model name stands for: its provider (`gen_ai.provider.name`) and the vendor's model id. */
export interface ModelFacts {
  provider: string;
  model: string;
}

export interface TracingOptions {
  tracer: Tracer;
  captureContent: boolean;
  /** Provider and model id of a `model_list` entry by its name (undefined for a name the config does not have). */
  modelOf(modelName: string): ModelFacts | undefined;
  /** The config's secrets' scrubber, applied to every text a span carries. */
  redact(text: string): string;
}

type Events = Pick<EventBus, "on">;

/** Spans open at once at most, of each kind (a turn, a model call, a tool call); past it the oldest is ended. */
const MAX_OPEN = 10_000;
/** Ended turns remembered for log lines written after their end (the "turn" line), at most. */
const MAX_ENDED = 1_000;

/** A Map that forgets its oldest entry past `max` (and hands it to `evicted`). */
class Bounded<K, V> extends Map<K, V> {
  constructor(
    private readonly max: number,
    private readonly evicted: (value: V) => void = () => {},
  ) {
    super();
  }
  override set(key: K, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.max) {
      const [oldest, old] = this.entries().next().value as [K, V];
      super.delete(oldest);
      this.evicted(old);
    }
    return this;
  }
}

const endSpan = (span: Span) => span.end();

export class GatewayTracing {
  private readonly turns = new Bounded<string, Span>(MAX_OPEN, endSpan);
  private readonly models = new Bounded<string, Span>(MAX_OPEN, endSpan);
  private readonly tools = new Bounded<string, Span>(MAX_OPEN, endSpan);
  /** A subagent's session key → the span context of the tool call that started it. */
  private readonly childParents = new Bounded<string, SpanContext>(MAX_OPEN);
  /** A session's running turn (the last one started). */
  private readonly sessionTurns = new Bounded<string, string>(MAX_OPEN);
  /** Span contexts of turns (running and recently ended), for log lines. */
  private readonly turnContexts = new Bounded<string, SpanContext>(MAX_OPEN + MAX_ENDED);
  private readonly stops: (() => void)[];

  constructor(events: Events, opts: TracingOptions) {
    const { tracer } = opts;
    const content = (text: string | undefined): Attributes => (opts.captureContent && text !== undefined ? { text: opts.redact(text) } : {});
    this.stops = [
      events.on("subagent.start", (e) => {
        const parent = this.tools.get(callKey(e.turnId, e.callId));
        if (parent) this.childParents.set(e.childKey, parent.spanContext());
      }),
      events.on("subagent.end", (e) => this.childParents.delete(e.childKey)),
      events.on("turn.start", (e) => {
        const parent = this.childParents.get(e.sessionKey);
        const attributes: Attributes = {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": e.agentId,
          "picoclaw.turn.id": e.turnId,
          "picoclaw.session.key": opts.redact(e.sessionKey),
        };
        const input = content(e.text).text;
        if (input !== undefined) attributes["picoclaw.turn.input"] = input;
        const span = tracer.startSpan(
          `invoke_agent ${e.agentId}`,
          { kind: SpanKind.INTERNAL, attributes },
          parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
        );
        this.turns.set(e.turnId, span);
        this.sessionTurns.set(e.sessionKey, e.turnId);
        this.turnContexts.set(e.turnId, span.spanContext());
      }),
      events.on("llm.request", (e) => {
        const turn = this.turns.get(e.turnId);
        if (!turn) return;
        const facts = opts.modelOf(e.model);
        const model = facts?.model ?? e.model;
        const provider = facts?.provider ?? "unknown";
        const span = tracer.startSpan(
          `chat ${model}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              "gen_ai.operation.name": "chat",
              "gen_ai.system": provider,
              "gen_ai.provider.name": provider,
              "gen_ai.request.model": model,
              "picoclaw.model_name": e.model,
              "picoclaw.iteration": e.iteration,
              "picoclaw.request.messages": e.messages,
              "picoclaw.request.tools": e.tools,
            },
          },
          trace.setSpan(ROOT_CONTEXT, turn),
        );
        this.models.set(modelKey(e.turnId, e.iteration), span);
      }),
      events.on("llm.response", (e) => {
        const key = modelKey(e.turnId, e.iteration);
        const span = this.models.get(key);
        if (!span) return;
        this.models.delete(key);
        const attributes: Attributes = { "gen_ai.response.model": opts.modelOf(e.model)?.model ?? e.model, "picoclaw.response.tool_calls": e.toolCalls };
        const u = e.usage ?? {};
        if (u.inputTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = u.inputTokens;
        if (u.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = u.outputTokens;
        if (u.cacheReadInputTokens !== undefined) attributes["gen_ai.usage.cache_read.input_tokens"] = u.cacheReadInputTokens;
        if (u.cacheCreationInputTokens !== undefined) attributes["gen_ai.usage.cache_creation.input_tokens"] = u.cacheCreationInputTokens;
        if (e.firstTokenMs !== undefined) attributes["picoclaw.first_token_ms"] = e.firstTokenMs;
        span.setAttributes(attributes);
        span.end();
      }),
      events.on("tool.start", (e) => {
        const turn = this.turns.get(e.turnId);
        if (!turn) return;
        const span = tracer.startSpan(
          `execute_tool ${e.tool}`,
          { kind: SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.tool, "gen_ai.tool.call.id": e.callId } },
          trace.setSpan(ROOT_CONTEXT, turn),
        );
        this.tools.set(callKey(e.turnId, e.callId), span);
      }),
      events.on("tool.end", (e) => {
        const key = callKey(e.turnId, e.callId);
        const span = this.tools.get(key);
        if (!span) return;
        this.tools.delete(key);
        const output = content(e.text).text;
        if (output !== undefined) span.setAttribute("picoclaw.tool.output", output);
        if (e.isError) {
          span.setAttribute("error.type", "tool_error");
          span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool answered an error" });
        }
        span.end();
      }),
      events.on("delivery", (e) => {
        if (e.from !== "agent" || e.turnId === undefined) return;
        const output = content(e.text).text;
        if (output !== undefined) this.turns.get(e.turnId)?.setAttribute("picoclaw.turn.output", output);
      }),
      events.on("turn.end", (e) => {
        const span = this.turns.get(e.turnId);
        if (!span) return;
        this.turns.delete(e.turnId);
        if (this.sessionTurns.get(e.sessionKey) === e.turnId) this.sessionTurns.delete(e.sessionKey);
        // A model call the turn never saw answered (it failed, or the turn was stopped) ends with it.
        for (const [key, model] of this.models) {
          if (!key.startsWith(`${e.turnId}\u0000`)) continue;
          this.models.delete(key);
          model.setStatus({ code: SpanStatusCode.ERROR, message: e.outcome === "aborted" ? "stopped" : "no answer" });
          model.end();
        }
        const attributes: Attributes = { "picoclaw.turn.outcome": e.outcome };
        if (e.usage) {
          attributes["gen_ai.usage.input_tokens"] = e.usage.inputTokens;
          attributes["gen_ai.usage.output_tokens"] = e.usage.outputTokens;
        }
        span.setAttributes(attributes);
        if (e.outcome === "error") {
          span.setAttribute("error.type", "turn_error");
          span.setStatus({ code: SpanStatusCode.ERROR, message: opts.redact(e.error ?? "the turn failed") });
        }
        span.end();
      }),
    ];
  }

  /** `logger` with `trace_id` and `span_id` on each line about a turn (its `turn` id, or a `session` with a turn running). */
  logger(logger: Logger): Logger {
    const ids = (data: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
      if (!data) return data;
      const turnId = typeof data.turn === "string" ? data.turn : typeof data.session === "string" ? this.sessionTurns.get(data.session) : undefined;
      const context = turnId === undefined ? undefined : this.turnContexts.get(turnId);
      return context ? { ...data, trace_id: context.traceId, span_id: context.spanId } : data;
    };
    return {
      info: (message, data) => logger.info(message, ids(data)),
      warn: (message, data) => logger.warn(message, ids(data)),
      error: (message, data) => logger.error(message, ids(data)),
    };
  }

  /** Stops listening; spans still open are ended. */
  close(): void {
    for (const stop of this.stops.splice(0)) stop();
    for (const spans of [this.tools, this.models, this.turns]) {
      for (const span of spans.values()) span.end();
      spans.clear();
    }
  }
}

const callKey = (turnId: string, callId: string) => `${turnId}\u0000${callId}`;
const modelKey = (turnId: string, iteration: number) => `${turnId}\u0000${iteration}`;
