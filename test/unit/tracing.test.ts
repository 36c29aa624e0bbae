import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { GatewayTracing } from "../../src/gateway/tracing.js";
import { EventBus } from "../../src/port/events.js";

/** Spans made from the runtime's events, exported to memory. */
function traced(captureContent = false) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const events = new EventBus((error) => {
    throw error;
  });
  const tracing = new GatewayTracing(events, {
    tracer: provider.getTracer("test"),
    captureContent,
    modelOf: (name) => (name === "fast" ? { provider: "anthropic", model: "claude-x" } : undefined),
    redact: (text) => text.replaceAll("sk-secret", "[redacted]"),
  });
  const spans = () => exporter.getFinishedSpans();
  return { events, tracing, spans };
}

const scope = { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1" };

describe("spans from the runtime's events", () => {
  it("a tool that answers an error and a turn that fails end with error status; a model call never answered ends with the turn", () => {
    const { events, spans } = traced();
    events.emit("turn.start", { ...scope, text: "hello sk-secret" });
    events.emit("llm.request", { ...scope, model: "fast", iteration: 1, messages: 2, tools: 1 });
    events.emit("llm.response", { ...scope, model: "fast", iteration: 1, toolCalls: 1, durationMs: 5, usage: { inputTokens: 7, outputTokens: 3 } });
    events.emit("tool.start", { ...scope, tool: "exec", callId: "c1" });
    events.emit("tool.end", { ...scope, tool: "exec", callId: "c1", isError: true, silent: false, durationMs: 1, text: "boom" });
    events.emit("llm.request", { ...scope, model: "fast", iteration: 2, messages: 4, tools: 1 });
    events.emit("turn.end", { ...scope, outcome: "error", durationMs: 9, error: "provider said sk-secret is bad" });
    const byName = Object.fromEntries(spans().map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(["chat claude-x", "execute_tool exec", "invoke_agent main"]);
    const chats = spans().filter((s) => s.name === "chat claude-x");
    expect(chats.map((s) => s.status.code)).toEqual([0, 2]);
    expect(chats[0]!.attributes).toMatchObject({ "gen_ai.provider.name": "anthropic", "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3 });
    expect(byName["execute_tool exec"]!.status.code).toBe(2);
    expect(byName["invoke_agent main"]!.status).toEqual({ code: 2, message: "provider said [redacted] is bad" });
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toMatch(/hello|boom/);
  });

  it("with capture_content the texts are there, scrubbed of the config's secrets", () => {
    const { events, spans } = traced(true);
    events.emit("turn.start", { ...scope, text: "hello sk-secret" });
    events.emit("delivery", { ...scope, from: "agent", text: "the reply" });
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 1 });
    expect(spans()[0]!.attributes).toMatchObject({ "picoclaw.turn.input": "hello [redacted]", "picoclaw.turn.output": "the reply" });
  });

  it("log lines about a turn (by its id, or its session while it runs) carry its trace and span ids; others are left as they are", () => {
    const { events, tracing, spans } = traced();
    const data: (Record<string, unknown> | undefined)[] = [];
    const keep = (_message: string, d?: Record<string, unknown>) => void data.push(d);
    const logger = tracing.logger({ info: keep, warn: keep, error: keep });
    events.emit("turn.start", { ...scope, text: "x" });
    logger.info("tool answered an error", { session: scope.sessionKey });
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 1 });
    logger.info("turn", { turn: "t1" });
    logger.info("other", { turn: "unknown" });
    const { traceId, spanId } = spans()[0]!.spanContext();
    expect(data).toEqual([
      { session: scope.sessionKey, trace_id: traceId, span_id: spanId },
      { turn: "t1", trace_id: traceId, span_id: spanId },
      { turn: "unknown" },
    ]);
  });

  it("close stops listening and ends what is open", () => {
    const { events, tracing, spans } = traced();
    events.emit("turn.start", { ...scope, text: "x" });
    tracing.close();
    expect(spans()).toHaveLength(1);
    events.emit("turn.start", { ...scope, turnId: "t2", text: "y" });
    expect(spans()).toHaveLength(1);
  });
});
