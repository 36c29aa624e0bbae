import { z } from "zod";
import { bootstrap } from "../src/bootstrap.js";
import { startGateway } from "../src/gateway/server.js";
import { silentLogger } from "../src/log.js";
import { defineTool, toolResult } from "../src/tools/tool.js";
import { benchProject, fmt, instantModel, percentile, report, timed } from "./support.js";

/**
 * A tool-calling turn through the real HTTP gateway (HTTP in → runtime →
 * model call → tool → model call → HTTP out) against an instant local fake
 * model, versus the same two raw calls to that fake model, in the same run.
 * The ratio and the added p50 are the gateway's own cost per turn.
 * Histories stay in memory here (a fresh session each turn would otherwise
 * be a new session file each turn); what keeping them on disk adds is
 * bench/persist.ts's measure.
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

export async function benchTurn(): Promise<Record<string, number>> {
  const model = await instantModel("note", { text: "bench" });
  const project = benchProject(model.url);
  const { runtime } = bootstrap(project.loaded, { logger: silentLogger, tools: [noteTool], history: "memory" });
  const gateway = await startGateway({ runtime, logger: silentLogger, host: "127.0.0.1", port: 0, token: "" });

  const rawPair = async () => {
    for (const last of ["user", "tool"]) {
      const res = await fetch(`${model.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "bench", messages: [{ role: last, content: "x", tool_call_id: "c" }] }),
      });
      await res.json();
    }
  };
  let session = 0;
  const turn = async () => {
    const res = await fetch(`${gateway.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      // A fresh session per turn keeps history (and so request size) constant.
      body: JSON.stringify({ message: "take a note", session: `b${++session}` }),
    });
    const body = (await res.json()) as { reply?: string };
    if (body.reply !== "done") throw new Error(`unexpected reply: ${JSON.stringify(body)}`);
  };

  try {
    for (let i = 0; i < WARMUP; i++) {
      await rawPair();
      await turn();
    }
    const raw: number[] = [];
    const full: number[] = [];
    // Interleave the two so machine noise hits both alike.
    for (let i = 0; i < TURNS; i++) {
      raw.push((await timed(rawPair)).ms);
      full.push((await timed(turn)).ms);
    }
    const rawTotal = raw.reduce((a, b) => a + b, 0);
    const fullTotal = full.reduce((a, b) => a + b, 0);
    const result = {
      turns: TURNS,
      ratio: fullTotal / rawTotal,
      rawP50: percentile(raw, 50),
      turnP50: percentile(full, 50),
      addedP50: percentile(full, 50) - percentile(raw, 50),
      turnP99: percentile(full, 99),
    };
    report("turn: tool-calling turn through the gateway vs the same 2 raw model calls", [
      ["turns", String(TURNS)],
      ["raw 2 calls p50 (ms)", fmt(result.rawP50, 3)],
      ["gateway turn p50 (ms)", fmt(result.turnP50, 3)],
      ["added p50 per turn (ms)", fmt(result.addedP50, 3)],
      ["gateway turn p99 (ms)", fmt(result.turnP99, 3)],
      ["ratio turn/raw (total time)", `${fmt(result.ratio)}x`],
    ]);
    return result;
  } finally {
    await gateway.close();
    await model.close();
    project.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchTurn();
