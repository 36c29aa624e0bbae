import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { bootstrap } from "../src/bootstrap.js";
import { startGateway } from "../src/gateway/server.js";
import { silentLogger } from "../src/log.js";
import { defineTool, toolResult } from "../src/tools/tool.js";
import { benchProject, fmt, instantModel, percentile, report, timed } from "./support.js";

/**
 * What traces cost a turn. Two gateways in one run, turns interleaved so
 * machine noise hits both alike: one with telemetry off (no endpoint: what
 * `picoclaw gateway` does then is nothing at all, no module loaded, no
 * listener added, so this is the previous behaviour), one with traces on,
 * made exactly as `picoclaw gateway` makes them (tracing.ts, tracing-sdk.ts)
 * and exported to a local OTLP/HTTP receiver in this process. The turn is
 * bench/turn.ts's (model → tool → model), so each one makes 4 spans.
 */

const TURNS = Number(process.env.BENCH_TURNS ?? 400);
const WARMUP = 50;

const noteTool = defineTool({
  name: "note",
  description: "Keeps a note.",
  parameters: z.strictObject({ text: z.string() }),
  enabledByDefault: true,
  execute: ({ text }) => toolResult.silent(`noted: ${text}`),
});

export async function benchTraces(): Promise<Record<string, number>> {
  let spansReceived = 0;
  const receiver = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      spansReceived += (
        Buffer.concat(parts)
          .toString()
          .match(/"spanId"/g) ?? []
      ).length;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;

  const model = await instantModel("note", { text: "bench" });
  const project = benchProject(model.url);
  const off = bootstrap(project.loaded, { logger: silentLogger, tools: [noteTool], history: "memory" }).runtime;
  const on = bootstrap(project.loaded, { logger: silentLogger, tools: [noteTool], history: "memory" }).runtime;
  const [{ startTraceExport }, { GatewayTracing }] = await Promise.all([import("../src/gateway/tracing-sdk.js"), import("../src/gateway/tracing.js")]);
  const exported = startTraceExport({
    endpoint,
    headers: {},
    serviceName: "bench",
    serviceVersion: "0",
    timeoutMs: 10_000,
    maxQueueSpans: 2_048,
    maxBatchSpans: 512,
    batchDelayMs: 5_000,
    logger: silentLogger,
    redact: (text) => text,
  });
  const tracing = new GatewayTracing(on, {
    tracer: exported.tracer,
    captureContent: false,
    modelOf: () => ({ provider: "openai", model: "bench" }),
    redact: (text) => text,
  });
  const gateways = {
    off: await startGateway({ runtime: off, logger: silentLogger, host: "127.0.0.1", port: 0, token: "" }),
    on: await startGateway({ runtime: on, logger: silentLogger, host: "127.0.0.1", port: 0, token: "" }),
  };

  let session = 0;
  const turn = (url: string) => async () => {
    const res = await fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "take a note", session: `b${++session}` }),
    });
    const body = (await res.json()) as { reply?: string };
    if (body.reply !== "done") throw new Error(`unexpected reply: ${JSON.stringify(body)}`);
  };
  const turnOff = turn(gateways.off.url);
  const turnOn = turn(gateways.on.url);

  try {
    for (let i = 0; i < WARMUP; i++) {
      await turnOff();
      await turnOn();
    }
    const offMs: number[] = [];
    const onMs: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      if (i % 2 === 0) {
        offMs.push((await timed(turnOff)).ms);
        onMs.push((await timed(turnOn)).ms);
      } else {
        onMs.push((await timed(turnOn)).ms);
        offMs.push((await timed(turnOff)).ms);
      }
    }
    await exported.close();
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const result = {
      turns: TURNS,
      offP50: percentile(offMs, 50),
      onP50: percentile(onMs, 50),
      addedP50: percentile(onMs, 50) - percentile(offMs, 50),
      ratio: sum(onMs) / sum(offMs),
      spansReceived,
    };
    report("traces: a tool-calling turn with traces off vs on (exported to a local OTLP/HTTP receiver)", [
      ["turns", String(TURNS)],
      ["traces off p50 (ms)", fmt(result.offP50, 3)],
      ["traces on p50 (ms)", fmt(result.onP50, 3)],
      ["added p50 per turn (ms)", fmt(result.addedP50, 3)],
      ["ratio on/off (total time)", `${fmt(result.ratio)}x`],
      ["spans received", String(spansReceived)],
    ]);
    return result;
  } finally {
    tracing.close();
    await gateways.off.close();
    await gateways.on.close();
    await model.close();
    await new Promise((done) => receiver.close(done));
    project.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchTraces();
