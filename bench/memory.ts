import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { builtinConfigSchema } from "../src/house.js";
import { GC_NODE_ARGS, collectGarbage, gatewayProject, settled, startGateway } from "./processes.js";
import { fmt, report } from "./support.js";

const configSchema = builtinConfigSchema();

/**
 * Memory as a user runs the gateway: a separate process started with
 * `node dist/main.js gateway` in a folder with the shipped `main` agent, its
 * RSS read from /proc. Three gateways, one after the other:
 *
 * - "bounded": no config file, so the default bounds (max_history_bytes,
 *   session.max_sessions, session.max_bytes);
 * - "unbounded": those bounds at their maxima, which is how the gateway
 *   behaved before them (500 messages a session, every session kept);
 * - "capped": the defaults again, with `node --max-old-space-size`, to show
 *   how much of the peak is garbage V8 had not collected yet.
 *
 * Each one: a warm-up, then its baseline; then (bounded only) IDLE small
 * sessions in two halves (one "hello" each), then HEAVY sessions fed
 * messages of 1 MB in two rounds of FED each (the built-in model echoes
 * them, so an exchange keeps about 2 MB). At each point the benchmark reads
 * RSS as it is, then asks the gateway for a full garbage collection (a
 * SIGUSR2 handler loaded with `--import`; the gateway's code is unchanged)
 * and reads RSS and the heap's live bytes. Figures are differences from the
 * baseline of the same process. A bound shows as memory that stops growing
 * while more is sent; the benchmark fails when it does not.
 */

const IDLE = Number(process.env.BENCH_IDLE_SESSIONS ?? 20_000);
/** Heap a session on disk may cost once it has left memory: its entry in the store's index (key, times, sizes). */
const MAX_INDEX_BYTES = 512;
const HEAVY = Number(process.env.BENCH_HEAVY_SESSIONS ?? 100);
const FED = Number(process.env.BENCH_HEAVY_MESSAGES ?? 2);
const MB = 1_000_000;
const MiB = 1024 * 1024;
const ROOT = path.resolve(import.meta.dirname, "..");

/** The old-space size (MiB) of a third run with the default bounds: how much of the peak is garbage V8 has not yet collected. */
const CAPPED_HEAP_MIB = 256;

const UNBOUNDED = {
  agents: { defaults: { max_history_bytes: 64 * MiB } },
  session: { max_sessions: 10_000_000, max_bytes: 64 * 1024 * MiB },
};

interface Memory {
  rss: number;
  peak: number;
}

/** RSS and its peak, in bytes, from /proc (Linux) or ps (peak unknown). */
function memoryOf(pid: number): Memory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
    return { rss: kb("VmRSS"), peak: kb("VmHWM") };
  } catch {
    return {
      rss:
        Number(
          execFileSync("ps", ["-o", "rss=", "-p", String(pid)])
            .toString()
            .trim(),
        ) * 1024,
      peak: Number.NaN,
    };
  }
}

/** Builds dist/ when `npm start` would: scripts/start.mjs decides (sources, build settings, packages), here with `--version` as the command. */
export function ensureBuilt(): void {
  const start = spawnSync(process.execPath, [path.join(ROOT, "scripts", "start.mjs"), "--version"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  if (start.status !== 0) throw new Error("the build failed");
}

interface Gateway {
  url: string;
  memory(): Memory;
  /** Runs a full garbage collection in the gateway, then reads its memory and the bytes its heap uses. */
  collected(): Promise<Memory & { heapUsed: number }>;
  stop(): Promise<void>;
}

/** `node dist/main.js gateway` in a fresh folder with the shipped main agent (and `config`, if given). */
async function startGatewayIn(config?: unknown, nodeOptions: string[] = []): Promise<Gateway> {
  const folder = gatewayProject("memory", config);
  const proc = await startGateway(folder.dir, [...nodeOptions, ...GC_NODE_ARGS]);
  const pid = proc.child.pid!;
  return {
    url: proc.url,
    memory: () => memoryOf(pid),
    collected: async () => {
      const heapUsed = await collectGarbage(proc);
      return { ...memoryOf(pid), heapUsed };
    },
    stop: async () => {
      await proc.stop();
      folder.remove();
    },
  };
}

async function chat(url: string, session: string, message: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });
  if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  await res.arrayBuffer();
}

/** Messages a session holds (read from its file once evicted from memory: session.store jsonl, the default). */
async function held(url: string, session: string): Promise<number> {
  const res = await fetch(`${url}/v1/sessions/agent:main:http:${session}/history?limit=1`);
  return ((await res.json()) as { total: number }).total;
}

/** Runs `count` jobs, `width` at a time. */
async function pool(count: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/** RSS as it is, and after a full garbage collection (live memory, plus what V8 and malloc keep), with the heap's live bytes. */
interface Reading {
  rss: number;
  live: number;
  heap: number;
}

async function read(gateway: Gateway): Promise<Reading> {
  const rss = gateway.memory().rss;
  const collected = await gateway.collected();
  return { rss, live: collected.rss, heap: collected.heapUsed };
}

/** A reading once the gateway has settled (see `settled`). */
const settledRead = (gateway: Gateway): Promise<Reading> => settled(() => read(gateway));

interface Run {
  baseline: Reading;
  /** After each half of the idle sessions (none in the unbounded run). */
  idle: Reading[];
  /** Messages held by the first and the last idle session at the end (0: evicted). */
  idleHeld: number[];
  /** After each round of 1 MB messages. */
  heavy: Reading[];
  peak: number;
  seconds: number;
}

async function measure(config: unknown, withIdle: boolean, nodeOptions: string[] = []): Promise<Run> {
  const started = performance.now();
  const gateway = await startGatewayIn(config, nodeOptions);
  try {
    // Warm-up: every path the load takes, once, then the baseline.
    await pool(200, 8, (i) => chat(gateway.url, `warm${i % 20}`, "hello"));
    await chat(gateway.url, "warm-big", "x".repeat(MB));
    const baseline = await settledRead(gateway);
    const idle: Reading[] = [];
    const idleHeld: number[] = [];
    if (withIdle) {
      for (const half of [0, 1]) {
        await pool(IDLE / 2, 16, (i) => chat(gateway.url, `idle${half * (IDLE / 2) + i}`, "hello"));
        idle.push(await settledRead(gateway));
      }
      idleHeld.push(await held(gateway.url, "idle0"), await held(gateway.url, `idle${IDLE - 1}`));
    }
    const big = "x".repeat(MB - 16);
    const heavy: Reading[] = [];
    for (const round of [0, 1]) {
      await pool(HEAVY * FED, 4, (i) => chat(gateway.url, `heavy${i % HEAVY}`, `${round}.${i}`.padEnd(16) + big));
      heavy.push(await read(gateway));
    }
    return { baseline, idle, idleHeld, heavy, peak: gateway.memory().peak, seconds: (performance.now() - started) / 1000 };
  } finally {
    await gateway.stop();
  }
}

const mib = (bytes: number) => `${fmt(bytes / MiB, 1)} MiB`;

export async function benchMemory(): Promise<Record<string, number>> {
  ensureBuilt();
  const defaults = configSchema.parse({});
  const maxBytes = defaults.session.max_bytes;
  const bounded = await measure(undefined, true);
  const unbounded = await measure(UNBOUNDED, false);
  const capped = await measure(undefined, false, [`--max-old-space-size=${CAPPED_HEAP_MIB}`]);
  const live = (run: Run, r: Reading) => r.live - run.baseline.live;
  const heap = (run: Run, r: Reading) => r.heap - run.baseline.heap;
  const fed = (rounds: number) => fmt((HEAVY * FED * rounds * MB) / MiB, 0);
  const [idleHalf, idleAll] = bounded.idle as [Reading, Reading];
  const [b1, b2] = bounded.heavy as [Reading, Reading];
  const [u1, u2] = unbounded.heavy as [Reading, Reading];
  const peak = (run: Run) => run.peak - run.baseline.rss;
  const result = {
    baselineMiB: bounded.baseline.rss / MiB,
    idleSessionHeapKiB: heap(bounded, idleHalf) / (IDLE / 2) / 1024,
    idleSessionRssKiB: live(bounded, idleHalf) / (IDLE / 2) / 1024,
    idleHeapGrowth: heap(bounded, idleAll) / heap(bounded, idleHalf),
    /** What each session past session.max_sessions adds: with store jsonl, its entry in the index of sessions on disk. */
    idleIndexBytes: (heap(bounded, idleAll) - heap(bounded, idleHalf)) / (IDLE / 2),
    heavyHeapMiB: heap(bounded, b2) / MiB,
    heavyHeapGrowth: heap(bounded, b2) / heap(bounded, b1),
    heavyRssMiB: live(bounded, b2) / MiB,
    unboundedHeavyHeapMiB: heap(unbounded, u2) / MiB,
    unboundedHeavyHeapGrowth: heap(unbounded, u2) / heap(unbounded, u1),
    heapOverMaxBytes: heap(bounded, b2) / maxBytes,
    peakMiB: peak(bounded) / MiB,
    unboundedPeakMiB: peak(unbounded) / MiB,
    cappedPeakMiB: peak(capped) / MiB,
  };
  const at = (run: Run, r: Reading) => `heap +${mib(heap(run, r))}, RSS +${mib(live(run, r))} (as is +${mib(r.rss - run.baseline.rss)})`;
  report("memory: a gateway process (node dist/main.js gateway); above its warmed-up baseline, after a full GC (RSS also as is)", [
    ["baseline", `heap ${mib(bounded.baseline.heap)}, RSS ${mib(bounded.baseline.live)} (as is ${mib(bounded.baseline.rss)})`],
    [`${IDLE / 2} idle sessions`, `${at(bounded, idleHalf)}: ${fmt(result.idleSessionHeapKiB)} KiB heap, ${fmt(result.idleSessionRssKiB)} KiB RSS each`],
    [
      `${IDLE} idle sessions`,
      `${at(bounded, idleAll)}: heap x${fmt(result.idleHeapGrowth)} for twice the sessions, ${fmt(result.idleIndexBytes, 0)} bytes each past session.max_sessions`,
    ],
    [
      "  kept: the first, the last",
      `${bounded.idleHeld.map((n) => (n > 0 ? "yes" : "no")).join(", ")} (the first evicted from memory past session.max_sessions ${defaults.session.max_sessions}, read back from its file)`,
    ],
    [`${HEAVY} sessions fed ${fed(1)} MiB of 1 MB messages`, at(bounded, b1)],
    [`${HEAVY} sessions fed ${fed(2)} MiB`, `${at(bounded, b2)}: heap x${fmt(result.heavyHeapGrowth)} for twice the data`],
    [`  unbounded, fed ${fed(1)} MiB`, at(unbounded, u1)],
    [`  unbounded, fed ${fed(2)} MiB`, `${at(unbounded, u2)}: heap x${fmt(result.unboundedHeavyHeapGrowth)}`],
    [`heap / session.max_bytes (${mib(maxBytes)})`, `${fmt(result.heapOverMaxBytes)}x`],
    ["peak RSS above baseline: bounded, unbounded", `+${mib(peak(bounded))}, +${mib(peak(unbounded))}`],
    [`  bounded, node --max-old-space-size=${CAPPED_HEAP_MIB}`, `+${mib(peak(capped))} (fed ${fed(2)} MiB: ${at(capped, capped.heavy[1]!)})`],
    ["time: bounded, unbounded, capped", [bounded, unbounded, capped].map((r) => `${fmt(r.seconds, 1)} s`).join(", ")],
  ]);
  const broken = [
    // Past session.max_sessions a session leaves memory but for its entry in the index of sessions on disk (bounded by session.max_stored).
    result.idleIndexBytes > MAX_INDEX_BYTES &&
      `each idle session past session.max_sessions added ${fmt(result.idleIndexBytes, 0)} bytes of heap (at most ${MAX_INDEX_BYTES}: its index entry)`,
    (!bounded.idleHeld[0] || !bounded.idleHeld[1]) && "an idle session lost its history (evicted from memory, it must be read back from its file)",
    result.heavyHeapGrowth > 1.1 && `the heap grew x${fmt(result.heavyHeapGrowth)} when twice the data was sent`,
    result.heapOverMaxBytes > 1.15 && `the heap holds ${fmt(result.heapOverMaxBytes)}x session.max_bytes`,
  ].filter(Boolean);
  if (broken.length > 0) throw new Error(`memory is not bounded: ${broken.join("; ")}`);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchMemory();
