import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileNameOf } from "../src/session/jsonl/file-names.js";
import { CENSUS_DELAY_MS } from "../src/session/jsonl/stored-index.js";
import { ensureBuilt } from "./memory.js";
import { Client, GC_NODE_ARGS, ROOT, collectGarbage, firstOk, freePort, gatewayProject, rssBytes, startProcess } from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * What sessions stored on disk cost a restart, measured as a user runs it:
 * `node dist/main.js gateway` (the default config but for the model,
 * pointed at the fake, and `todo` on) in a folder whose session folder
 * holds no session, and in one holding STORED sessions (one exchange each,
 * as a gateway writes them), the starts interleaved. For each start: the
 * time from spawning to the first 200 on /health, RSS then, the first
 * turn after that (a tool turn in a new session), then 200 more turns (so
 * that both have used the young generation V8 reserves: RSS counts its
 * pages once touched), and once the background count of the folder has run
 * (CENSUS_DELAY_MS after the first turn) RSS and the heap's live bytes
 * after a full GC (SIGUSR2 to a handler loaded with `--import`).
 * BENCH_BEFORE=<another build's main.js> adds that build's starts on the
 * same two folders.
 */

const STORED = Number(process.env.BENCH_STORED ?? 20_000);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const PROCS = path.join(ROOT, "bench", "procs");
const MiB = 1024 * 1024;

interface Reading {
  startMs: number;
  readyRss: number;
  firstTurnMs: number;
  countedRss: number;
  countedHeap: number;
}

async function start(main: string, dir: string): Promise<Reading> {
  const port = await freePort();
  const began = performance.now();
  const proc = startProcess(process.execPath, [...GC_NODE_ARGS, main, "gateway"], {
    cwd: dir,
    env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: String(port), PICOCLAW_LOG_LEVEL: "warn" },
  });
  const client = new Client(`http://127.0.0.1:${port}`, 1);
  try {
    const startMs = (await firstOk(`http://127.0.0.1:${port}/health`)) - began;
    const readyRss = rssBytes(proc.child.pid!);
    const turnBegan = performance.now();
    await client.chat("read the plan", `first${began}`);
    const firstTurnMs = performance.now() - turnBegan;
    for (let i = 0; i < 200; i++) await client.chat("read the plan", `warm${began}`);
    await sleep(Math.max(0, turnBegan + CENSUS_DELAY_MS + 2000 - performance.now()));
    const countedRss = rssBytes(proc.child.pid!);
    return { startMs, readyRss, firstTurnMs, countedRss, countedHeap: await collectGarbage(proc) };
  } finally {
    client.close();
    await proc.stop();
  }
}

function folderWith(count: number, config: unknown, name: string): { dir: string; remove(): void } {
  const folder = gatewayProject(name, config);
  const sessions = path.join(folder.dir, "sessions");
  mkdirSync(sessions, { recursive: true });
  for (let i = 0; i < count; i++) {
    const file = fileNameOf(`agent:main:http:stored${i}`);
    const lines = `{"role":"user","content":"hello ${i}"}\n{"role":"assistant","content":"hi ${i}, how can I help?"}\n`;
    writeFileSync(path.join(sessions, `${file}.jsonl`), lines);
    writeFileSync(
      path.join(sessions, `${file}.meta.json`),
      `${JSON.stringify({ key: `agent:main:http:stored${i}`, agent: "main", created_at: "", updated_at: "", count: 2, bytes: Buffer.byteLength(lines) }, null, 2)}\n`,
    );
  }
  return folder;
}

export async function benchRestart(): Promise<Record<string, number>> {
  ensureBuilt();
  const model = startProcess(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
  const [, modelUrl] = await model.waitFor(/listening on (http:\/\/\S+)/);
  const config = {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: modelUrl }],
    tools: { todo: { enabled: true } },
  };
  const empty = folderWith(0, config, "restart-empty");
  const full = folderWith(STORED, config, "restart-full");
  const builds: [string, string][] = [["gateway", path.join(ROOT, "dist", "main.js")]];
  if (process.env.BENCH_BEFORE) builds.push(["before", process.env.BENCH_BEFORE]);
  const readings = new Map<string, Reading[]>();
  try {
    for (let i = 0; i < STARTS; i++) {
      for (const [build, main] of builds) {
        for (const [kind, folder] of i % 2 === 0
          ? ([
              ["empty", empty],
              ["full", full],
            ] as const)
          : ([
              ["full", full],
              ["empty", empty],
            ] as const)) {
          const key = `${build}.${kind}`;
          readings.set(key, [...(readings.get(key) ?? []), await start(main, folder.dir)]);
        }
      }
    }
  } finally {
    await model.stop();
    empty.remove();
    full.remove();
  }
  const median = (key: string, field: keyof Reading) =>
    percentile(
      readings.get(key)!.map((r) => r[field]),
      50,
    );
  const result: Record<string, number> = {};
  const rows: [string, string][] = [];
  for (const [build] of builds) {
    const figures = {
      startMs: [median(`${build}.empty`, "startMs"), median(`${build}.full`, "startMs")],
      readyRssMiB: [median(`${build}.empty`, "readyRss") / MiB, median(`${build}.full`, "readyRss") / MiB],
      firstTurnMs: [median(`${build}.empty`, "firstTurnMs"), median(`${build}.full`, "firstTurnMs")],
      countedRssMiB: [median(`${build}.empty`, "countedRss") / MiB, median(`${build}.full`, "countedRss") / MiB],
      countedHeapMiB: [median(`${build}.empty`, "countedHeap") / MiB, median(`${build}.full`, "countedHeap") / MiB],
    };
    for (const [name, [none, many]] of Object.entries(figures)) {
      result[`${build}.${name}.empty`] = none!;
      result[`${build}.${name}.full`] = many!;
    }
    const perSession = (none: number, many: number, scale: number, unit: string) => `${fmt(((many - none) * scale) / STORED, 2)} ${unit} per stored session`;
    rows.push(
      [
        `${build}: start → /health (0 / ${STORED} stored)`,
        `${fmt(figures.startMs[0]!, 0)} / ${fmt(figures.startMs[1]!, 0)} ms: ${perSession(figures.startMs[0]!, figures.startMs[1]!, 1000, "µs")}`,
      ],
      [
        `${build}: RSS when ready`,
        `${fmt(figures.readyRssMiB[0]!, 1)} / ${fmt(figures.readyRssMiB[1]!, 1)} MiB: ${perSession(figures.readyRssMiB[0]!, figures.readyRssMiB[1]!, 1024, "KiB")}`,
      ],
      [`${build}: first turn after ready`, `${fmt(figures.firstTurnMs[0]!, 1)} / ${fmt(figures.firstTurnMs[1]!, 1)} ms`],
      [
        `${build}: after 200 turns, the folder counted: RSS`,
        `${fmt(figures.countedRssMiB[0]!, 1)} / ${fmt(figures.countedRssMiB[1]!, 1)} MiB: ${perSession(figures.countedRssMiB[0]!, figures.countedRssMiB[1]!, 1024, "KiB")}`,
      ],
      [
        `${build}: the same, heap after a full GC`,
        `${fmt(figures.countedHeapMiB[0]!, 1)} / ${fmt(figures.countedHeapMiB[1]!, 1)} MiB: ${perSession(figures.countedHeapMiB[0]!, figures.countedHeapMiB[1]!, 1024 * 1024, "bytes")}`,
      ],
    );
  }
  report(`restart: a gateway with no session stored vs ${STORED}, ${STARTS} starts each, interleaved, medians`, rows);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRestart();
