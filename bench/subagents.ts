import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { bootstrap } from "../src/bootstrap.js";
import { silentLogger } from "../src/log.js";
import { benchProject, fmt, percentile, report } from "./support.js";

/**
 * A parent fans out CHILDREN subagents in one model answer; each child's
 * model answers after CHILD_MS. The parent's wall time is compared with its
 * slowest child's own time (measured the same run): the fan-out should cost
 * little more than that one child. A second run with a lower
 * `max_concurrent` checks the cap holds (never more children at once).
 */

const CHILDREN = 10;
const CHILD_MS = 20;
const TURNS = Number(process.env.BENCH_SUBAGENT_TURNS ?? 20);

function completion(message: Record<string, unknown>, finish: string): string {
  return JSON.stringify({
    id: "b",
    object: "chat.completion",
    created: 0,
    model: "bench",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
  });
}

async function fanOutModel() {
  const fanOut = completion(
    {
      content: null,
      tool_calls: Array.from({ length: CHILDREN }, (_, i) => ({
        id: `call_${i}`,
        type: "function",
        function: { name: "subagent", arguments: JSON.stringify({ task: `part ${i}`, label: `part ${i}` }) },
      })),
    },
    "tool_calls",
  );
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const { messages } = JSON.parse(Buffer.concat(parts).toString()) as { messages: { role: string; content: string }[] };
      const send = (body: string) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(body);
      };
      const last = messages.at(-1)!;
      if (last.role === "tool") return send(completion({ content: "all parts done" }, "stop"));
      if (last.content.startsWith("[A task")) return setTimeout(() => send(completion({ content: "part done" }, "stop")), CHILD_MS);
      send(fanOut);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function run(url: string, maxConcurrent: number) {
  const project = benchProject(url, { subturn: { max_concurrent: maxConcurrent } }, "You fan out.");
  const { runtime } = bootstrap(project.loaded, { logger: silentLogger });
  let running = 0;
  let peak = 0;
  let slowest = 0;
  runtime.on("subagent.start", () => (peak = Math.max(peak, ++running)));
  runtime.on("subagent.end", (e) => {
    running--;
    slowest = Math.max(slowest, e.durationMs);
  });
  const ratios: number[] = [];
  const walls: number[] = [];
  try {
    for (let i = 0; i < TURNS + 3; i++) {
      slowest = 0;
      const start = performance.now();
      const outcome = await runtime.handleMessage({ agentId: "main", channel: "bench", chatId: `t${i}`, text: "fan out" });
      const wall = performance.now() - start;
      if (outcome.reply !== "all parts done") throw new Error(`unexpected reply ${outcome.reply}`);
      if (i < 3) continue; // warm-up
      walls.push(wall);
      ratios.push(wall / slowest);
    }
  } finally {
    await runtime.close(0);
    project.remove();
  }
  return { ratio: percentile(ratios, 50), wall: percentile(walls, 50), peak };
}

export async function benchSubagents(): Promise<Record<string, number>> {
  const model = await fanOutModel();
  try {
    const open = await run(model.url, CHILDREN);
    const capped = await run(model.url, 5);
    if (capped.peak > 5) throw new Error(`the cap did not hold: ${capped.peak} children ran at once with max_concurrent 5`);
    report(`subagents: a parent fans out ${CHILDREN} children (each child's model answers after ${CHILD_MS} ms), median of ${TURNS}`, [
      ["max_concurrent 10: parent wall p50 (ms)", fmt(open.wall, 1)],
      ["max_concurrent 10: wall / slowest child (target <= 1.30)", `${fmt(open.ratio)}x`],
      ["max_concurrent 10: children at once (peak)", String(open.peak)],
      ["max_concurrent 5: parent wall p50 (ms)", fmt(capped.wall, 1)],
      ["max_concurrent 5: children at once (peak, must be <= 5)", String(capped.peak)],
      ["max_concurrent 5: wall / slowest child (two waves: about 2x)", `${fmt(capped.ratio)}x`],
    ]);
    return { ratio: open.ratio, peakOpen: open.peak, peakCapped: capped.peak, cappedRatio: capped.ratio };
  } finally {
    await model.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSubagents();
