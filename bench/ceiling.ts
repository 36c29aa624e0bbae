import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureBuilt } from "./memory.js";
import { Client, GC_NODE_ARGS, type Proc, ROOT, collectGarbage, gatewayProject, rssBytes, settled, startServer, benchConfig } from "./processes.js";
import { fmt, report } from "./support.js";

/**
 * The memory ceiling: the gateway's RSS idle and after the floor's load
 * (bench/floor.ts), on the floor's config (the default but for the model,
 * pointed at the fake model process, and `todo` on: the turn's tool).
 *
 * - idle: two seconds after start (no turn yet), then after one turn and
 *   a second's rest (the target's figure: what a gateway in use holds);
 * - busy: after the warm-up's first 20 turns and a second's rest, which
 *   make the gateway busy (gateway.limits.jit_busy_turns) and turn V8's
 *   optimizing compiler on, for comparison;
 * - after load: the floor's turns, in the same order and number (50
 *   warm-up, 400 from one client, then 10 clients for 0.5 s and two rounds
 *   of 3 s), each in a new session, then a second's rest; RSS as it is;
 *   then once the gateway has been idle long enough to collect its heap by
 *   itself (gateway.limits.idle_collect_ms, 10 s, and 2 s more); then after
 *   a full collection (SIGUSR2 to a handler loaded with `--import`), with
 *   the heap's live bytes.
 *
 * With BENCH_HEAP_SNAPSHOTS=<folder>, the gateway also writes a heap
 * snapshot there idle and after the load (`--heapsnapshot-signal=SIGUSR1`,
 * bench only: the gateway's code is unchanged), for Chrome's DevTools.
 * BENCH_NODE_OPTIONS adds node flags to the gateway (to try a V8 setting).
 */

const WARMUP = 50;
/** Turns of the warm-up after which the RSS is read once more (more than gateway.limits.jit_busy_turns). */
const BUSY_TURNS = 20;
const TURNS = Number(process.env.BENCH_TURNS ?? 400);
const CLIENTS = 10;
const LOAD_ROUND_MS = Number(process.env.BENCH_LOAD_ROUND_MS ?? 3000);
const LOAD_ROUNDS = 2;
const MiB = 1024 * 1024;
const PROCS = path.join(ROOT, "bench", "procs");
/** The targets: RSS idle and after the load (issue 32). */
const IDLE_TARGET_MIB = 60;
const LOAD_TARGET_MIB = 100;
/** The default gateway.limits.idle_collect_ms, and time for the collection to give its pages back. */
const IDLE_COLLECT_MS = 10_000 + 2_000;

let sessions = 0;

/** `count` turns from one client, each in a new session. */
async function turns(client: Client, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await client.chat("read the plan", `c${++sessions}`);
}

/** CLIENTS clients, each sending its next turn (a new session) as soon as the last is answered, for `ms`. */
async function load(client: Client, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        await client.chat("read the plan", `c${++sessions}`);
        done++;
      }
    }),
  );
  return done;
}

/** Asks the gateway for a heap snapshot (when BENCH_HEAP_SNAPSHOTS is set) and waits until it is written. */
async function snapshot(proc: Proc & { url: string }, folder: string | undefined): Promise<string | undefined> {
  if (!folder) return undefined;
  const before = new Set(readdirSync(folder));
  proc.child.kill("SIGUSR1");
  for (let i = 0; i < 600; i++) {
    await sleep(100);
    const made = readdirSync(folder).find((f) => !before.has(f) && f.endsWith(".heapsnapshot"));
    // Written once the process answers again.
    if (made && (await stillAnswers(proc))) return path.join(folder, made);
  }
  return undefined;
}

async function stillAnswers(proc: Proc & { url: string }): Promise<boolean> {
  try {
    return (await fetch(`${proc.url}/health`)).ok;
  } catch {
    return false;
  }
}

export async function benchCeiling(): Promise<Record<string, number>> {
  ensureBuilt();
  const snapshots = process.env.BENCH_HEAP_SNAPSHOTS ? path.resolve(process.env.BENCH_HEAP_SNAPSHOTS) : undefined;
  if (snapshots) mkdirSync(snapshots, { recursive: true });
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
  const config = benchConfig(model.url);
  const folder = gatewayProject("ceiling", config);
  const extra = (process.env.BENCH_NODE_OPTIONS ?? "").split(" ").filter(Boolean);
  const snapshotArgs = snapshots ? ["--heapsnapshot-signal=SIGUSR1", `--diagnostic-dir=${snapshots}`] : [];
  const gateway = await startServer(process.execPath, [...extra, ...snapshotArgs, ...GC_NODE_ARGS, path.join(ROOT, "dist", "main.js"), "gateway"], {
    cwd: folder.dir,
    env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0" },
  });
  const client = new Client(gateway.url, CLIENTS + 2);
  const pid = gateway.child.pid!;
  try {
    await sleep(2000);
    const startedRss = rssBytes(pid);
    await turns(client, 1);
    await sleep(1000);
    const idleRss = rssBytes(pid);
    const idleSnapshot = await snapshot(gateway, snapshots);
    // The warm-up's first turns make the gateway busy (gateway.limits.jit_busy_turns: 10 within 10 s), which turns
    // V8's optimizing compiler on: RSS after them, for comparison with a gateway of little traffic.
    await turns(client, BUSY_TURNS);
    await sleep(1000);
    const busyRss = rssBytes(pid);
    await turns(client, WARMUP - BUSY_TURNS + TURNS);
    await load(client, 500);
    let loaded = 0;
    for (let round = 0; round < LOAD_ROUNDS; round++) loaded += await load(client, LOAD_ROUND_MS);
    await sleep(1000);
    const loadRss = rssBytes(pid);
    const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) * 1024;
    const loadSnapshot = await snapshot(gateway, snapshots);
    await sleep(IDLE_COLLECT_MS);
    const restedRss = rssBytes(pid);
    const collected = await settled(async () => ({ heap: await collectGarbage(gateway), rss: rssBytes(pid) }));
    const result = {
      startedRssMiB: startedRss / MiB,
      idleRssMiB: idleRss / MiB,
      busyRssMiB: busyRss / MiB,
      loadRssMiB: loadRss / MiB,
      peakRssMiB: peak / MiB,
      restedRssMiB: restedRss / MiB,
      collectedRssMiB: collected.rss / MiB,
      liveHeapMiB: collected.heap / MiB,
      sessions,
      loadTurns: loaded,
    };
    const target = (met: boolean) => (met ? "met" : "NOT met");
    report("ceiling: the gateway's RSS idle and after the floor's load (default config, the fake model, todo on)", [
      ["idle RSS 2 s after start, no turn", `${fmt(result.startedRssMiB, 1)} MiB`],
      ["idle RSS after one turn", `${fmt(result.idleRssMiB, 1)} MiB (target ≤ ${IDLE_TARGET_MIB} MiB: ${target(result.idleRssMiB <= IDLE_TARGET_MIB)})`],
      [`RSS after ${BUSY_TURNS} more turns (busy: V8's optimizing compiler on)`, `${fmt(result.busyRssMiB, 1)} MiB`],
      [
        `RSS after load (${sessions} turns, each a new session)`,
        `${fmt(result.loadRssMiB, 1)} MiB, peak ${fmt(result.peakRssMiB, 1)} MiB (target ≤ ${LOAD_TARGET_MIB} MiB: ${target(result.loadRssMiB <= LOAD_TARGET_MIB)})`,
      ],
      ["  once idle 12 s (the gateway's own collection)", `${fmt(result.restedRssMiB, 1)} MiB`],
      ["  after a full collection", `${fmt(result.collectedRssMiB, 1)} MiB RSS, ${fmt(result.liveHeapMiB, 1)} MiB live heap`],
      ...(snapshots ? ([["heap snapshots", [idleSnapshot, loadSnapshot].join(", ")]] as [string, string][]) : []),
    ]);
    return result;
  } finally {
    client.close();
    await gateway.stop();
    await model.stop();
    folder.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCeiling();
