/**
 * `GET /metrics` through the real routes (hono's app.request): Prometheus
 * text on a registry of the gateway's own, counting what the runtime's
 * events say (turns, model calls, tool calls and errors, approvals) and
 * what it holds (sessions, queued turns, open streams); behind the token
 * when one is set; never a session key or a user's text as a label; and
 * prom-client (Node's own metrics) loaded with the first scrape only.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../../src/gateway/app.js";
import { GatewayMetrics } from "../../src/gateway/metrics.js";
import type { Feature } from "../../src/port/feature.js";
import { eventStreamAnswer } from "../../src/gateway/sse.js";
import { silentLogger } from "../../src/log.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { type Harness, DEFAULT_TOOLS_OFF, harness, jsonOf } from "../support/project.js";
import { parsePrometheus } from "../support/prometheus.js";
import { sseReader } from "../support/sse.js";
import { testTools } from "../support/tools.js";
import { eventually, waitFor, within } from "../support/wait.js";

const call = (tool: string, args: Record<string, unknown>) => `CALL ${tool} ${JSON.stringify(args)}`;

async function scrape(h: Harness, headers: Record<string, string> = {}) {
  const res = await h.request("/metrics", { headers });
  expect(res.status).toBe(200);
  return { res, text: await res.text() };
}

describe("GET /metrics", () => {
  it("is Prometheus text counting a turn, its model call and its tool calls and errors by tool, with no session key or user text in it", async () => {
    const h = harness({ tools: testTools, config: { tools: DEFAULT_TOOLS_OFF } });
    expect((await h.chat({ message: call("echo", { text: "private words" }), session: "secret-chat" })).status).toBe(200);
    expect((await h.chat({ message: call("boom", {}), session: "secret-chat" })).status).toBe(200);
    const { res, text } = await scrape(h);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const m = parsePrometheus(text);
    expect(m.value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(2);
    expect(m.value("picoclaw_turn_duration_seconds_count", { agent: "main", outcome: "done" })).toBe(2);
    // Each turn: the call, then the answer after its result.
    expect(m.value("picoclaw_model_calls_total", { agent: "main", model: "local" })).toBe(4);
    expect(m.value("picoclaw_model_call_duration_seconds_count", { agent: "main", model: "local" })).toBe(4);
    expect(m.value("picoclaw_model_time_to_first_token_seconds_count", { agent: "main", model: "local" })).toBe(4);
    expect(m.value("picoclaw_tool_calls_total", { tool: "echo" })).toBe(1);
    expect(m.value("picoclaw_tool_calls_total", { tool: "boom" })).toBe(1);
    expect(m.value("picoclaw_tool_errors_total", { tool: "boom" })).toBe(1);
    expect(m.value("picoclaw_tool_errors_total", { tool: "echo" })).toBeUndefined();
    expect(m.value("picoclaw_tool_call_duration_seconds_count", { tool: "echo" })).toBe(1);
    expect(m.value("picoclaw_sessions_active")).toBe(1);
    expect(m.value("picoclaw_turns_running")).toBe(0);
    expect(m.value("picoclaw_turns_queued")).toBe(0);
    expect(m.types.get("picoclaw_turns_total")).toBe("counter");
    expect(m.types.get("picoclaw_turn_duration_seconds")).toBe("histogram");
    expect(m.types.get("picoclaw_sessions_active")).toBe("gauge");
    // Node's own: memory, heap, event-loop lag.
    expect(m.value("process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(m.types.get("nodejs_eventloop_lag_seconds")).toBe("gauge");
    expect(m.types.get("nodejs_heap_size_used_bytes")).toBe("gauge");
    expect(text).not.toMatch(/secret-chat|private words|agent:main:http/);
  });

  it("refuses without the token when one is set (401, as /v1 does), and answers with it", async () => {
    const h = harness({ token: "s3cret" });
    const missing = await h.request("/metrics");
    expect(missing.status).toBe(401);
    expect(await jsonOf(missing)).toEqual({ error: { code: "unauthorized", message: "missing Authorization: Bearer <token>" } });
    expect((await h.request("/metrics", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    const { text } = await scrape(h, { authorization: "Bearer s3cret" });
    expect(parsePrometheus(text).types.get("picoclaw_turns_total")).toBe("counter");
    expect(text).not.toContain("s3cret");
  });

  it("counts approvals by decision, and shows the call waiting for a person and the message queued behind it meanwhile", async () => {
    const touch = defineTool({
      name: "touch",
      description: "Touches a thing.",
      parameters: z.strictObject({ thing: z.string() }),
      enabledByDefault: true,
      execute: ({ thing }) => toolResult.text(`touched ${thing}`),
    });
    const h = harness({ tools: [touch], config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } } } });
    const key = "agent:main:http:default";
    const first = h.chat({ message: call("touch", { thing: "door" }) });
    const pending = async () => (await jsonOf(await h.request(`/v1/sessions/${key}/approvals`))).approvals;
    await waitFor("an approval request", async () => (await pending()).length > 0);
    const second = h.chat({ message: "hello" });
    const during = await eventually(async () => {
      const m = parsePrometheus((await scrape(h)).text);
      expect(m.value("picoclaw_turns_queued")).toBe(1);
      return m;
    });
    expect(during.value("picoclaw_approvals_waiting")).toBe(1);
    expect(during.value("picoclaw_turns_running")).toBe(1);
    const [approval] = await pending();
    const decided = await h.request(`/v1/sessions/${key}/approvals/${approval.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "deny" }),
    });
    expect(decided.status).toBe(200);
    await within("both turns", Promise.all([first, second]));
    const after = parsePrometheus((await scrape(h)).text);
    expect(after.value("picoclaw_approvals_total", { tool: "touch", decision: "deny" })).toBe(1);
    expect(after.value("picoclaw_approvals_waiting")).toBe(0);
    expect(after.value("picoclaw_turns_queued")).toBe(0);
    expect(after.value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(2);
  });

  it("counts an open event stream and a streamed answer while their bodies are open, and no more once they end", async () => {
    const h = harness({ tools: testTools, config: { tools: DEFAULT_TOOLS_OFF } });
    const streams = async () => parsePrometheus((await scrape(h)).text).value("picoclaw_sse_streams_open");
    expect(await streams()).toBe(0);
    const events = sseReader(await h.request("/v1/sessions/agent:main:http:default/events"));
    expect(await streams()).toBe(1);
    const answer = await h.request("/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "hi", stream: true }),
    });
    expect(await streams()).toBe(2);
    const streamed = sseReader(answer);
    await streamed.until("turn.end");
    await eventually(async () => expect(await streams()).toBe(1));
    events.close();
    await eventually(async () => expect(await streams()).toBe(0));
  });

  it("counts a feature route's text/event-stream answer while it is unread, and a JSON one not at all", async () => {
    const feed: Feature = {
      name: "feed",
      setup: () => ({
        routes: [
          { method: "GET", path: "/feed/events", auth: "none", handle: () => ({ body: "data: one\n\n", contentType: "text/event-stream" }) },
          { method: "GET", path: "/feed/json", auth: "none", handle: () => ({ json: { ok: true } }) },
        ],
      }),
    };
    const h = harness({ tools: testTools, config: { tools: DEFAULT_TOOLS_OFF }, features: [feed] });
    const streams = async () => parsePrometheus((await scrape(h)).text).value("picoclaw_sse_streams_open");
    const plain = await h.request("/feed/json");
    expect(await streams()).toBe(0);
    expect(await plain.json()).toEqual({ ok: true });
    const events = await h.request("/feed/events");
    expect(events.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(await streams()).toBe(1);
    expect(await events.text()).toBe("data: one\n\n");
    await eventually(async () => expect(await streams()).toBe(0));
  });

  it("counts no HEAD of a feature route's event stream (hono drops its body unread)", async () => {
    const feed: Feature = {
      name: "feed",
      setup: () => ({
        routes: [{ method: "GET", path: "/feed/events", auth: "none", handle: () => ({ body: "data: one\n\n", contentType: "text/event-stream" }) }],
      }),
    };
    const h = harness({ tools: testTools, config: { tools: DEFAULT_TOOLS_OFF }, features: [feed] });
    const streams = async () => parsePrometheus((await scrape(h)).text).value("picoclaw_sse_streams_open");
    const res = await h.request("/feed/events", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.body).toBeNull();
    expect(await streams()).toBe(0);
  });

  it("leaves an answer that is no event stream as it is, never asking for its headers or body (so the node listener writes its text as it is)", async () => {
    const runtime = { agentIds: () => ["main"], on: () => () => {} } as unknown as ConstructorParameters<typeof GatewayMetrics>[0];
    const metrics = new GatewayMetrics(runtime, silentLogger);
    const counting = metrics.countStreams();
    const asked: string[] = [];
    const plain = {
      status: 200,
      get headers() {
        asked.push("headers");
        return new Headers({ "content-type": "application/json" });
      },
      get body() {
        asked.push("body");
        return new ReadableStream();
      },
    };
    const c = { res: plain } as unknown as Parameters<typeof counting>[0];
    await counting(c, async () => {});
    expect(asked).toEqual([]);
    expect(c.res).toBe(plain);
    // An event stream its route made is still wrapped to be counted.
    const s = {
      req: { method: "GET" },
      body: (body: ReadableStream, status: number, headers: Record<string, string>) => new Response(body, { status, headers }),
    } as unknown as Parameters<typeof counting>[0] & { res: Response };
    let answered: Response | undefined;
    await counting(s, async () => {
      answered = s.res = eventStreamAnswer(s, new Response("data: x\n\n").body!, {});
    });
    const made = s.res;
    expect(made).not.toBe(answered);
    expect(made.headers.get("content-type")).toBe("text/event-stream");
    expect(await made.text()).toBe("data: x\n\n");
  });

  it("counts from the first event without prom-client, which loads with the first scrape only", async () => {
    const h = harness({ config: { tools: DEFAULT_TOOLS_OFF } });
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const metrics = new GatewayMetrics(h.runtime, silentLogger, async () => {
      loads++;
      await gate;
      return import("../../src/gateway/metrics-registry.js");
    });
    await h.chat({ message: "one" });
    await h.chat({ message: "two" });
    expect(loads).toBe(0);
    expect(parsePrometheus(metrics.ownText()).value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(2);
    const ready = metrics.ready();
    expect(loads).toBe(1);
    release();
    const registry = await ready;
    expect(parsePrometheus(await registry.text()).types.get("nodejs_eventloop_lag_seconds")).toBe("gauge");
    metrics.close();
  });

  it("answers the gateway's own series when prom-client fails to load, says so once, and loads it at the next scrape", async () => {
    const h = harness({ config: { tools: DEFAULT_TOOLS_OFF } });
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
    let fails = true;
    const metrics = new GatewayMetrics(h.runtime, logger, async () => {
      if (fails) throw new Error("no prom-client here");
      return import("../../src/gateway/metrics-registry.js");
    });
    const app = createApp(h.runtime, { logger, metrics });
    await h.chat({ message: "one" });
    const first = await app.request("/metrics");
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const m = parsePrometheus(await first.text());
    expect(m.value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(1);
    expect(m.types.has("nodejs_eventloop_lag_seconds")).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/^metrics: prom-client did not load \(no prom-client here\)/)]);
    fails = false;
    const second = parsePrometheus(await (await app.request("/metrics")).text());
    expect(second.types.get("nodejs_eventloop_lag_seconds")).toBe("gauge");
    expect(second.value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(1);
    metrics.close();
  });

  it("process_cpu_seconds_total is the process's CPU since it started, not since the first scrape loaded prom-client", async () => {
    const h = harness({ config: { tools: DEFAULT_TOOLS_OFF } });
    const before = process.cpuUsage();
    const { text } = await scrape(h);
    expect(parsePrometheus(text).value("process_cpu_seconds_total")).toBeGreaterThanOrEqual((before.user + before.system) / 1e6);
  });

  it("writes a histogram as Prometheus does: cumulative buckets up to +Inf, then its sum and count; label values quoted and escaped", async () => {
    const { CounterTally, HistogramTally } = await import("../../src/gateway/metrics-tally.js");
    const histogram = new HistogramTally("t_seconds", "Time.", ["tool"], [0.1, 1]);
    for (const value of [0.05, 0.1, 0.5, 7]) histogram.observe({ tool: "a" }, value);
    const m = parsePrometheus(histogram.text());
    expect(m.samples("t_seconds_bucket").map((s) => [s.labels.le, s.value])).toEqual([
      ["0.1", 2],
      ["1", 3],
      ["+Inf", 4],
    ]);
    expect([m.value("t_seconds_sum", { tool: "a" }), m.value("t_seconds_count", { tool: "a" })]).toEqual([7.65, 4]);
    const counter = new CounterTally("odd_total", "Odd labels.", ["tool"]);
    counter.inc({ tool: 'a"b\\c\nd' }, 2);
    expect(counter.text()).toContain('odd_total{tool="a\\"b\\\\c\\nd"} 2\n');
    expect(parsePrometheus(counter.text()).value("odd_total", { tool: 'a"b\\c\nd' })).toBe(2);
    // What no event should carry, and would spoil a series: not counted. A label not given is "", one series with "".
    histogram.observe({ tool: "a" }, Number.NaN);
    counter.inc({ tool: "n" }, Number.POSITIVE_INFINITY);
    counter.inc({}, 1);
    counter.inc({ tool: "" }, 1);
    expect(parsePrometheus(histogram.text()).value("t_seconds_count", { tool: "a" })).toBe(4);
    expect(counter.text()).not.toContain('tool="n"');
    expect(counter.text()).toContain('odd_total{tool=""} 2\n');
  });

  it("keeps prom-client's global registry empty: the gateway's metrics are on a registry of its own", async () => {
    const h = harness();
    await scrape(h);
    const { register } = await import("prom-client");
    expect(register.getMetricsAsArray()).toEqual([]);
  });
});
