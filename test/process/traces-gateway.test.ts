/**
 * Traces from the real gateway process (`node dist/main.js gateway`) to a
 * local OTLP/HTTP receiver (JSON on POST /v1/traces): a tool turn with a
 * subagent yields one trace of turn, model and tool spans with the GenAI
 * attributes, the child's turn under the parent's tool call; no message or
 * tool text in spans unless capture_content; the exporter's headers reach
 * the receiver and never the log; log lines about a turn carry its trace id.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_TOOLS_OFF, openaiConfig, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";
import { waitFor, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const model = useScriptedModel();
const HEADER_SECRET = "otlp-header-value-7f3a9c";

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  status?: { code?: number };
  attrs: Record<string, string | number | boolean>;
}

/** An OTLP/HTTP receiver: every span it was sent, and the headers of each export. */
class Receiver {
  readonly spans: Span[] = [];
  readonly bodies: string[] = [];
  readonly headers: IncomingHttpHeaders[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces" || !req.headers["content-type"]?.startsWith("application/json")) {
          res.writeHead(415).end();
          return;
        }
        const body = Buffer.concat(parts).toString("utf8");
        self!.take(body, req.headers);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`);
    return self;
  }

  private take(body: string, headers: IncomingHttpHeaders): void {
    this.bodies.push(body);
    this.headers.push(headers);
    // biome-ignore lint/suspicious/noExplicitAny: OTLP's JSON encoding
    const json = JSON.parse(body) as any;
    for (const resource of json.resourceSpans ?? [])
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? []) {
          const attrs: Span["attrs"] = {};
          for (const { key, value } of span.attributes ?? []) {
            attrs[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
          }
          this.spans.push({ ...span, attrs });
        }
  }

  close(): Promise<void> {
    return new Promise((done) => this.server.close(() => done()));
  }
}

interface Running {
  child: ChildProcess;
  url: string;
  output: { text: string };
  dir: string;
}

const running: Running[] = [];
const receivers: Receiver[] = [];

async function gateway(receiver: Receiver, captureContent: boolean): Promise<Running> {
  const dir = mkdtempSync(path.join(tmpdir(), "picoclaw-traces-"));
  const base = openaiConfig(model.server.url);
  writeProject(
    {
      agents: { main: "---\nname: Main\nallow_agents: [main]\n---\nYou coordinate." },
      config: {
        ...base,
        tools: { todo: { enabled: true }, ...DEFAULT_TOOLS_OFF },
        telemetry: {
          service_name: "traces-test",
          capture_content: captureContent,
          otlp: { endpoint: receiver.url, headers: { "x-vendor-key": HEADER_SECRET }, batch_delay_ms: 50 },
        },
      },
    },
    dir,
  );
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { text: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
  const url = await within(
    'the gateway\'s "listening on" line',
    new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const match = /listening on (http:\/\/\S+)/.exec(output.text);
        if (match) {
          clearInterval(poll);
          resolve(match[1]!);
        }
      }, 20);
      child.once("exit", (code) => {
        clearInterval(poll);
        reject(new Error(`exited with ${code}:\n${output.text}`));
      });
    }),
    { ms: 60_000, instead: () => output.text },
  );
  const started = { child, url, output, dir };
  running.push(started);
  return started;
}

async function stop(g: Running): Promise<void> {
  if (g.child.exitCode !== null) return;
  const exited = new Promise((done) => g.child.once("exit", done));
  g.child.kill("SIGTERM");
  await exited;
}

afterAll(async () => {
  for (const g of running) {
    await stop(g);
    rmSync(g.dir, { recursive: true, force: true });
  }
  await Promise.all(receivers.map((r) => r.close()));
});

const PLAN_TEXT = "plan-text-only-the-user-wrote";
const CHILD_TEXT = "child-reply-text-9d1";

/** A turn that writes a plan (tool todo) and runs a subagent, which answers CHILD_TEXT. */
async function tracedTurn(captureContent: boolean) {
  const receiver = await Receiver.start();
  receivers.push(receiver);
  const g = await gateway(receiver, captureContent);
  const message = [call("todo", { action: "write", todos: [{ id: "p1", content: PLAN_TEXT }] }), call("subagent", { task: `SAY ${CHILD_TEXT}` })].join("\n");
  const res = await fetch(`${g.url}/v1/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, session: "traced" }),
  });
  expect(res.status).toBe(200);
  // The stop flushes what is queued.
  await stop(g);
  await waitFor("the parent turn's span at the receiver", () => receiver.spans.some((s) => s.attrs["picoclaw.session.key"] === "agent:main:http:traced"));
  return { receiver, g, message };
}

describe("traces over OTLP/HTTP", () => {
  it("a tool turn with a subagent is one trace: turn, model and tool spans with the GenAI attributes, the child under the parent's tool call; no text in spans; the headers reach the receiver and never the log", async () => {
    const { receiver, g } = await tracedTurn(false);
    const spans = receiver.spans;
    const turns = spans.filter((s) => s.attrs["gen_ai.operation.name"] === "invoke_agent");
    const parent = turns.find((s) => s.attrs["picoclaw.session.key"] === "agent:main:http:traced")!;
    expect(parent.name).toBe("invoke_agent main");
    expect(parent.parentSpanId ?? "").toBe("");
    expect(parent.attrs["picoclaw.turn.outcome"]).toBe("done");
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([parent.traceId]));

    const models = spans.filter((s) => s.attrs["gen_ai.operation.name"] === "chat" && s.parentSpanId === parent.spanId);
    expect(models.length).toBe(3);
    for (const m of models) {
      expect(m.name).toBe("chat fake-model");
      expect(m.attrs).toMatchObject({
        "gen_ai.system": "openai",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "fake-model",
        "gen_ai.response.model": "fake-model",
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 5,
      });
    }
    const tools = spans.filter((s) => s.attrs["gen_ai.operation.name"] === "execute_tool");
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_tool subagent", "execute_tool todo"]);
    for (const t of tools) {
      expect(t.parentSpanId).toBe(parent.spanId);
      expect(t.attrs["gen_ai.tool.name"]).toBe(t.name.replace("execute_tool ", ""));
      expect(String(t.attrs["gen_ai.tool.call.id"])).toMatch(/^call_/);
    }
    const subagentCall = tools.find((t) => t.name === "execute_tool subagent")!;
    const child = turns.find((s) => s !== parent)!;
    expect(child.parentSpanId).toBe(subagentCall.spanId);
    expect(String(child.attrs["picoclaw.session.key"])).toMatch(/^agent:main:http:traced:subagent:/);
    expect(spans.filter((s) => s.attrs["gen_ai.operation.name"] === "chat" && s.parentSpanId === child.spanId)).toHaveLength(1);

    const everything = receiver.bodies.join("\n");
    expect(everything).not.toContain(PLAN_TEXT);
    expect(everything).not.toContain(CHILD_TEXT);
    expect(everything).toContain('"traces-test"');
    expect(receiver.headers.every((h) => h["x-vendor-key"] === HEADER_SECRET)).toBe(true);
    expect(g.output.text).not.toContain(HEADER_SECRET);
    // The log's lines about the turn name its trace.
    const lines = g.output.text
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const turnLine = lines.find((l) => l.msg === "turn" && l.session === "agent:main:http:traced")!;
    expect(turnLine).toMatchObject({ trace_id: parent.traceId, span_id: parent.spanId });
    expect(lines.filter((l) => l.msg === "model answered").every((l) => l.trace_id === parent.traceId)).toBe(true);
  }, 120_000);

  it("with capture_content the spans carry the user's message and the replies", async () => {
    const { receiver, message } = await tracedTurn(true);
    const parent = receiver.spans.find((s) => s.attrs["picoclaw.session.key"] === "agent:main:http:traced")!;
    expect(parent.attrs["picoclaw.turn.input"]).toBe(message);
    expect(String(parent.attrs["picoclaw.turn.output"])).toContain(CHILD_TEXT);
    expect(receiver.bodies.join("\n")).toContain(PLAN_TEXT);
  }, 120_000);
});
