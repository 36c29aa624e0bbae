import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { build } from "esbuild";
import { ensureBuilt } from "./memory.js";
import {
  Client,
  GC_NODE_ARGS,
  type Proc,
  ROOT,
  collectGarbage,
  cpuMs,
  firstOk,
  freePort,
  gatewayProject,
  rssBytes,
  settled,
  startProcess,
  startServer,
  benchConfig,
} from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * The gateway against the floor, measured from outside as a user runs it,
 * every figure against a baseline taken in the same run:
 *
 * - start: `npm start` → first 200 on /health, vs a bare node:http server
 *   started by `npm start` (bench/procs/bare-start); and `node dist/main.js
 *   gateway` → /health vs `node` on the same bare server. Interleaved. For
 *   reference, not a target: `npm start` of the gateway's packages and
 *   nothing of ours (bench/procs/stack-start: hono, zod, pino, nanoid,
 *   async-mutex), bundled as ES modules the way scripts/build.mjs bundles
 *   the gateway before its CommonJS pass, without a code cache: where any
 *   gateway on this stack starts from on Node 20.
 * - turns: the gateway (default config: only the model, pointed at the fake,
 *   and `todo` switched on, the turn's tool) vs the minimal gateway
 *   (bench/procs/minimal-gateway.mjs: node:http in, the model called with
 *   fetch until it stops calling tools, a constant tool result, JSON out),
 *   both separate processes calling the same fake model process
 *   (bench/procs/fake-model.mjs). One turn = message → tool call (`todo
 *   read`) → tool → "done". The gateway streams from the model (its
 *   default); the minimal gateway reads whole answers.
 *   - one client: p50 / p95, interleaved, and the CPU each server process
 *     used per turn (from /proc/<pid>/stat, over the same turns);
 *   - 10 concurrent clients: turns/s, rounds alternating between the two.
 *   Each turn is in a new session, so the gateway makes a new session file
 *   each time (its default store, jsonl); the same gateway with
 *   `session.store: "memory"` is measured beside them, for reference (not
 *   a target), so that the cost of those files shows on its own.
 * - idle RSS of the gateway process after it answered one turn.
 * - bytes per idle session: a gateway with no config file (the defaults,
 *   the built-in model), 4,000 sessions of one "hello" each; heap and RSS
 *   after a full GC (asked for with SIGUSR2), once settled, above a baseline
 *   warmed up by as many turns into 200 sessions.
 */

const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const TURNS = Number(process.env.BENCH_TURNS ?? 400);
const WARMUP = 50;
const CLIENTS = 10;
const LOAD_ROUND_MS = Number(process.env.BENCH_LOAD_ROUND_MS ?? 3000);
const LOAD_ROUNDS = 2;
const IDLE_SESSIONS = Number(process.env.BENCH_IDLE_SESSIONS ?? 4000);
const WARM_SESSIONS = 200;
const PROCS = path.join(ROOT, "bench", "procs");
const MiB = 1024 * 1024;

const gatewayEnv = (port: number | string) => ({ PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: String(port) });

type Starter = (port: number) => Proc;

/** From spawning to the first 200 on /health. */
async function timeStart(start: Starter): Promise<number> {
  const port = await freePort();
  const began = performance.now();
  const proc = start(port);
  try {
    const exited = new Promise<never>((_, reject) =>
      proc.child.once("exit", (code) => reject(new Error(`exited with ${code} before answering /health:\n${proc.output()}`))),
    );
    exited.catch(() => {});
    return (await Promise.race([firstOk(`http://127.0.0.1:${port}/health`), exited])) - began;
  } finally {
    await proc.stop();
  }
}

/**
 * bench/procs/stack-start built into a folder of its own (its package.json, and dist/server.js from its server.ts):
 * one ES module, minified as the gateway's chunks are. Returns the folder, for `npm start` there.
 */
async function buildStackServer(): Promise<string> {
  const source = path.join(PROCS, "stack-start");
  const dir = mkdtempSync(path.join(tmpdir(), "picoclaw-bench-stack-"));
  copyFileSync(path.join(source, "package.json"), path.join(dir, "package.json"));
  await build({
    entryPoints: [path.join(source, "server.ts")],
    outfile: path.join(dir, "dist", "server.js"),
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // pino, a CommonJS package, calls require() for Node's own modules (the gateway's build does the same).
    banner: { js: 'import { createRequire as __stackRequire } from "node:module"; const require = __stackRequire(import.meta.url);' },
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
  });
  return dir;
}

async function measureStarts(configDir: string) {
  const stack = await buildStackServer();
  const starters: Record<string, Starter> = {
    npmGateway: (port) =>
      startProcess("npm", ["start"], { cwd: ROOT, env: { ...gatewayEnv(port), PICOCLAW_CONFIG: path.join(configDir, "picoclaw.config.json") } }),
    npmBare: (port) => startProcess("npm", ["start"], { cwd: path.join(PROCS, "bare-start"), env: { PORT: String(port) } }),
    nodeGateway: (port) => startProcess(process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], { cwd: configDir, env: gatewayEnv(port) }),
    nodeBare: (port) => startProcess(process.execPath, [path.join(PROCS, "bare-start", "server.mjs")], { cwd: ROOT, env: { PORT: String(port) } }),
    npmStack: (port) => startProcess("npm", ["start"], { cwd: stack, env: { PORT: String(port) } }),
  };
  const names = Object.keys(starters);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (let i = 0; i < STARTS; i++) {
      // A different order each round, so no kind always follows the same other.
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]!;
        samples[name]!.push(await timeStart(starters[name]!));
      }
    }
  } finally {
    rmSync(stack, { recursive: true, force: true });
  }
  const median = (name: string) => percentile(samples[name]!, 50);
  return {
    npmGatewayMs: median("npmGateway"),
    npmBareMs: median("npmBare"),
    npmRatio: median("npmGateway") / median("npmBare"),
    npmStackMs: median("npmStack"),
    npmStackRatio: median("npmStack") / median("npmBare"),
    nodeGatewayMs: median("nodeGateway"),
    nodeBareMs: median("nodeBare"),
    nodeRatio: median("nodeGateway") / median("nodeBare"),
  };
}

interface Server {
  proc: Proc & { url: string };
  client: Client;
}

async function server(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<Server> {
  const proc = await startServer(command, args, { cwd, env });
  return { proc, client: new Client(proc.url, CLIENTS + 2) };
}

let sessions = 0;
/** One tool turn, in a fresh session (the same request size every time). */
const turn = (s: Server) => s.client.chat("read the plan", `b${++sessions}`);

/**
 * One client's turns, interleaved: the gateway, the minimal one, and (for
 * reference, not a target) the gateway with `session.store: "memory"`,
 * which shows what writing each new session's file costs.
 */
async function measureTurns(gateway: Server, minimal: Server, inMemory: Server) {
  const servers = { gateway, minimal, inMemory };
  const kinds = Object.keys(servers) as (keyof typeof servers)[];
  for (let i = 0; i < WARMUP; i++) for (const which of kinds) await turn(servers[which]);
  const times = { gateway: [] as number[], minimal: [] as number[], inMemory: [] as number[] };
  const cpuBefore = Object.fromEntries(kinds.map((which) => [which, cpuMs(servers[which].proc.child.pid!)]));
  for (let i = 0; i < TURNS; i++) {
    // Each in turn first, second and last.
    const order = kinds.map((_, k) => kinds[(i + k) % kinds.length]!);
    for (const which of order) {
      const began = performance.now();
      await turn(servers[which]);
      times[which].push(performance.now() - began);
    }
  }
  const cpu = Object.fromEntries(kinds.map((which) => [which, (cpuMs(servers[which].proc.child.pid!) - cpuBefore[which]!) / TURNS])) as Record<
    keyof typeof servers,
    number
  >;
  return {
    inMemoryP50: percentile(times.inMemory, 50),
    inMemoryCpuMs: cpu.inMemory,
    gatewayP50: percentile(times.gateway, 50),
    minimalP50: percentile(times.minimal, 50),
    p50Ratio: percentile(times.gateway, 50) / percentile(times.minimal, 50),
    gatewayP95: percentile(times.gateway, 95),
    minimalP95: percentile(times.minimal, 95),
    p95Ratio: percentile(times.gateway, 95) / percentile(times.minimal, 95),
    gatewayCpuMs: cpu.gateway,
    minimalCpuMs: cpu.minimal,
    cpuRatio: cpu.gateway / cpu.minimal,
  };
}

/** CLIENTS clients, each sending its next turn as soon as the last one is answered, for `ms`. */
async function load(s: Server, ms: number): Promise<{ turns: number; seconds: number; cpuMs: number }> {
  const cpuBefore = cpuMs(s.proc.child.pid!);
  const began = performance.now();
  const until = began + ms;
  let turns = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        await turn(s);
        turns++;
      }
    }),
  );
  return { turns, seconds: (performance.now() - began) / 1000, cpuMs: cpuMs(s.proc.child.pid!) - cpuBefore };
}

async function measureLoad(gateway: Server, minimal: Server, inMemory: Server) {
  const servers = { gateway, minimal, inMemory };
  const kinds = Object.keys(servers) as (keyof typeof servers)[];
  for (const which of kinds) await load(servers[which], 500);
  const sum = Object.fromEntries(kinds.map((which) => [which, { turns: 0, seconds: 0, cpuMs: 0 }])) as Record<
    keyof typeof servers,
    { turns: number; seconds: number; cpuMs: number }
  >;
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    const order = kinds.map((_, k) => kinds[(round + k) % kinds.length]!);
    for (const which of order) {
      const r = await load(servers[which], LOAD_ROUND_MS);
      sum[which].turns += r.turns;
      sum[which].seconds += r.seconds;
      sum[which].cpuMs += r.cpuMs;
    }
  }
  const rate = (w: keyof typeof servers) => sum[w].turns / sum[w].seconds;
  return {
    gatewayTurnsPerS: rate("gateway"),
    minimalTurnsPerS: rate("minimal"),
    inMemoryTurnsPerS: rate("inMemory"),
    throughputRatio: rate("gateway") / rate("minimal"),
    gatewayLoadCpuMs: sum.gateway.cpuMs / sum.gateway.turns,
    minimalLoadCpuMs: sum.minimal.cpuMs / sum.minimal.turns,
  };
}

/** RSS of each after it answered one turn and sat idle for a second. */
async function measureIdle(gateway: Server, minimal: Server) {
  await turn(gateway);
  await turn(minimal);
  await sleep(1000);
  return { gatewayIdleRssMiB: rssBytes(gateway.proc.child.pid!) / MiB, minimalIdleRssMiB: rssBytes(minimal.proc.child.pid!) / MiB };
}

/**
 * Heap and RSS per idle session in a gateway with the default config (no
 * config file: the built-in model). The baseline is the gateway after as
 * many turns as the load, into its 200 warm-up sessions: what any traffic
 * grows (V8's young generation, up to 2 × 16 MiB touched, compiled code,
 * malloc's arenas) is in it, so that what the load adds is what its new
 * sessions hold. Both readings wait for the gateway to settle: a burst's
 * meta files are written for seconds after it, and what that allocates is
 * not the sessions'. Exported to be run alone.
 */
export async function measureSessions() {
  const folder = gatewayProject("floor");
  const gateway = await server(process.execPath, [...GC_NODE_ARGS, path.join(ROOT, "dist", "main.js"), "gateway"], folder.dir, {
    ...gatewayEnv(0),
    PICOCLAW_LOG_LEVEL: "warn",
  });
  const collected = async () => ({ heap: await collectGarbage(gateway.proc), rss: rssBytes(gateway.proc.child.pid!) });
  /** `count` turns of one "hello", 16 at a time, in the sessions `session` names (a client of its own: the last one's sockets may have timed out). */
  const pool = async (count: number, session: (i: number) => string) => {
    const client = new Client(gateway.proc.url, 16);
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < count) {
            const res = await client.call("POST", "/v1/chat", { message: "hello", session: session(next++) });
            if (res.status !== 200) throw new Error(`chat answered ${res.status}: ${res.body.slice(0, 200)}`);
          }
        }),
      );
    } finally {
      client.close();
    }
  };
  try {
    await pool(WARM_SESSIONS, (i) => `warm${i}`);
    await pool(IDLE_SESSIONS, (i) => `warm${i % WARM_SESSIONS}`);
    const before = await settled(collected);
    await pool(IDLE_SESSIONS, (i) => `idle${i}`);
    const after = await settled(collected);
    return { sessionHeapBytes: (after.heap - before.heap) / IDLE_SESSIONS, sessionRssBytes: (after.rss - before.rss) / IDLE_SESSIONS };
  } finally {
    gateway.client.close();
    await gateway.proc.stop();
    folder.remove();
  }
}

export async function benchFloor(): Promise<Record<string, number>> {
  ensureBuilt();
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
  const config = benchConfig(model.url);
  const folder = gatewayProject("floor", config);
  const memoryFolder = gatewayProject("floor-memory", { ...config, session: { store: "memory" } });
  const servers: Server[] = [];
  try {
    const starts = await measureStarts(folder.dir);
    const gateway = await server(process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], folder.dir, gatewayEnv(0));
    servers.push(gateway);
    const minimal = await server(process.execPath, [path.join(PROCS, "minimal-gateway.mjs")], ROOT, { MODEL_URL: model.url, PORT: "0" });
    servers.push(minimal);
    const idle = await measureIdle(gateway, minimal);
    const inMemory = await server(process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], memoryFolder.dir, gatewayEnv(0));
    servers.push(inMemory);
    const turns = await measureTurns(gateway, minimal, inMemory);
    const loaded = await measureLoad(gateway, minimal, inMemory);
    for (const s of servers.splice(0)) {
      s.client.close();
      await s.proc.stop();
    }
    const sessions = await measureSessions();
    const result = { ...starts, ...turns, ...loaded, ...idle, ...sessions };
    const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 0)} ms`;
    const target = (met: boolean) => (met ? "met" : "NOT met");
    report("floor: the gateway vs the minimal gateway and a bare node:http server, separate processes, same run", [
      [
        "npm start → first 200 on /health",
        `${ms(result.npmGatewayMs)} vs bare ${ms(result.npmBareMs)}: ${fmt(result.npmRatio)}x (target ≤ 1.3x: ${target(result.npmRatio <= 1.3)})`,
      ],
      ["  the gateway's packages alone (reference)", `${ms(result.npmStackMs)}: ${fmt(result.npmStackRatio)}x of bare`],
      [
        "node dist/main.js gateway → /health",
        `${ms(result.nodeGatewayMs)} vs bare ${ms(result.nodeBareMs)}: ${fmt(result.nodeRatio)}x (target ≤ 2x: ${target(result.nodeRatio <= 2)})`,
      ],
      [
        `tool turn p50 (${TURNS} turns, one client)`,
        `${ms(result.gatewayP50)} vs minimal ${ms(result.minimalP50)}: ${fmt(result.p50Ratio)}x, +${ms(result.gatewayP50 - result.minimalP50)} (target ≤ 1.2x: ${target(result.p50Ratio <= 1.2)})`,
      ],
      [
        "  the same, session.store memory (reference)",
        `p50 ${ms(result.inMemoryP50)}: ${fmt(result.inMemoryP50 / result.minimalP50)}x, +${ms(result.inMemoryP50 - result.minimalP50)}; CPU ${ms(result.inMemoryCpuMs)}: ${fmt(result.inMemoryCpuMs / result.minimalCpuMs)}x`,
      ],
      ["tool turn p95", `${ms(result.gatewayP95)} vs minimal ${ms(result.minimalP95)}: ${fmt(result.p95Ratio)}x`],
      [
        "CPU per tool turn (server process)",
        `${ms(result.gatewayCpuMs)} vs minimal ${ms(result.minimalCpuMs)}: ${fmt(result.cpuRatio)}x (target ≤ 1.4x: ${target(result.cpuRatio <= 1.4)})`,
      ],
      [
        `${CLIENTS} concurrent clients, turns/s`,
        `${fmt(result.gatewayTurnsPerS, 0)} vs minimal ${fmt(result.minimalTurnsPerS, 0)}: ${fmt(result.throughputRatio)}x (target ≥ 0.6x: ${target(result.throughputRatio >= 0.6)})`,
      ],
      ["  the same, session.store memory (reference)", `${fmt(result.inMemoryTurnsPerS, 0)}: ${fmt(result.inMemoryTurnsPerS / result.minimalTurnsPerS)}x`],
      ["  CPU per turn under that load", `${ms(result.gatewayLoadCpuMs)} vs minimal ${ms(result.minimalLoadCpuMs)}`],
      [
        "idle RSS after one turn",
        `${fmt(result.gatewayIdleRssMiB, 1)} MiB (minimal ${fmt(result.minimalIdleRssMiB, 1)} MiB) (target ≤ 70 MiB: ${target(result.gatewayIdleRssMiB <= 70)})`,
      ],
      [
        `per idle session (${IDLE_SESSIONS}, one "hello" each)`,
        `RSS ${fmt(result.sessionRssBytes / 1024)} KiB, heap ${fmt(result.sessionHeapBytes / 1024)} KiB (target ≤ 2 KiB: ${target(result.sessionRssBytes <= 2048)})`,
      ],
    ]);
    return result;
  } finally {
    for (const s of servers) {
      s.client.close();
      await s.proc.stop();
    }
    await model.stop();
    folder.remove();
    memoryFolder.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFloor();
