import path from "node:path";
import { ensureBuilt } from "./memory.js";
import { Client, type Proc, ROOT, cpuMs, gatewayProject, startServer, benchConfig } from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * The gateway against the durable floor, measured from outside as a user
 * runs it, in the same run: the gateway (`node dist/main.js gateway`, the
 * default config but for the model, pointed at the fake, and `todo`
 * switched on: the turn's tool; sessions on disk, its default) against
 * bench/procs/durable-gateway.mjs (node:http, fetch to the model, history
 * in memory, one append and one fdatasync per turn before the reply, a
 * folder sync for a new file), both calling one fake model process. One
 * turn: a message → `todo read` → its result → "done".
 *
 * - ongoing: one client, turns into 10 conversations taking turns (each
 *   already has turns), the servers interleaved turn by turn; p50 / p95, and
 *   the CPU each server process used per turn over the same turns;
 * - new session: the same, each turn in a session of its own (a new file);
 * - 10 clients, each on a session of its own: turns/s, rounds alternating.
 *
 * BENCH_BEFORE=<path to another build's main.js> adds that gateway (e.g. a
 * build of the commit before) to every measurement, interleaved with the
 * others, so a before/after comparison is made in one run;
 * BENCH_MEMORY_STORE=1 adds the gateway with `session.store: "memory"`
 * (nothing written: what the store's part of a turn is).
 */

const TURNS = Number(process.env.BENCH_TURNS ?? 400);
const WARMUP = 50;
const CONVERSATIONS = 10;
const CLIENTS = 10;
const LOAD_ROUND_MS = Number(process.env.BENCH_LOAD_ROUND_MS ?? 3000);
const LOAD_ROUNDS = Number(process.env.BENCH_LOAD_ROUNDS ?? 2);
const PROCS = path.join(ROOT, "bench", "procs");

interface Server {
  name: string;
  proc: Proc & { url: string };
  client: Client;
}

const gatewayEnv = { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" };

async function server(name: string, command: string, args: string[], cwd: string, env: Record<string, string>): Promise<Server> {
  const proc = await startServer(command, args, { cwd, env });
  return { name, proc, client: new Client(proc.url, CLIENTS + 2) };
}

const turn = (s: Server, session: string) => s.client.chat("read the plan", session);

/** One client's turns, the servers interleaved turn by turn (each in turn first); the i-th turn goes to `session(i)`. */
async function interleaved(servers: Server[], session: (i: number) => string) {
  const times = new Map(servers.map((s) => [s, [] as number[]]));
  const cpuBefore = new Map(servers.map((s) => [s, cpuMs(s.proc.child.pid!)]));
  for (let i = 0; i < TURNS; i++) {
    for (let k = 0; k < servers.length; k++) {
      const s = servers[(i + k) % servers.length]!;
      const began = performance.now();
      await turn(s, session(i));
      times.get(s)!.push(performance.now() - began);
    }
  }
  return new Map(
    servers.map((s) => [
      s.name,
      { p50: percentile(times.get(s)!, 50), p95: percentile(times.get(s)!, 95), cpuMs: (cpuMs(s.proc.child.pid!) - cpuBefore.get(s)!) / TURNS },
    ]),
  );
}

/** CLIENTS clients, each on its own session, each sending its next turn as soon as the last one is answered, for `ms`. */
async function load(s: Server, ms: number): Promise<{ turns: number; seconds: number; cpuMs: number }> {
  const cpuBefore = cpuMs(s.proc.child.pid!);
  const began = performance.now();
  const until = began + ms;
  let turns = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (performance.now() < until) {
        await turn(s, `client${client}`);
        turns++;
      }
    }),
  );
  return { turns, seconds: (performance.now() - began) / 1000, cpuMs: cpuMs(s.proc.child.pid!) - cpuBefore };
}

async function throughput(servers: Server[]) {
  for (const s of servers) await load(s, 500);
  const sums = new Map(servers.map((s) => [s, { turns: 0, seconds: 0, cpuMs: 0 }]));
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    for (let k = 0; k < servers.length; k++) {
      const s = servers[(round + k) % servers.length]!;
      const r = await load(s, LOAD_ROUND_MS);
      const sum = sums.get(s)!;
      sum.turns += r.turns;
      sum.seconds += r.seconds;
      sum.cpuMs += r.cpuMs;
    }
  }
  return new Map(servers.map((s) => [s.name, { turnsPerS: sums.get(s)!.turns / sums.get(s)!.seconds, cpuMs: sums.get(s)!.cpuMs / sums.get(s)!.turns }]));
}

export async function benchDurable(): Promise<Record<string, number>> {
  ensureBuilt();
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
  const config = benchConfig(model.url);
  const folders = [
    gatewayProject("durable", config),
    gatewayProject("durable-floor"),
    gatewayProject("durable-before", config),
    gatewayProject("durable-memory", { ...config, session: { store: "memory" } }),
  ];
  const servers: Server[] = [];
  try {
    servers.push(await server("gateway", process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], folders[0]!.dir, gatewayEnv));
    servers.push(
      await server("floor", process.execPath, [path.join(PROCS, "durable-gateway.mjs")], ROOT, {
        MODEL_URL: model.url,
        PORT: "0",
        SESSION_DIR: path.join(folders[1]!.dir, "sessions"),
      }),
    );
    const before = process.env.BENCH_BEFORE;
    if (before) servers.push(await server("before", process.execPath, [before, "gateway"], folders[2]!.dir, gatewayEnv));
    if (process.env.BENCH_MEMORY_STORE) {
      servers.push(await server("memory store", process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], folders[3]!.dir, gatewayEnv));
    }
    for (let i = 0; i < WARMUP; i++) for (const s of servers) await turn(s, `talk${i % CONVERSATIONS}`);
    const ongoing = await interleaved(servers, (i) => `talk${i % CONVERSATIONS}`);
    let fresh = 0;
    const newSession = await interleaved(servers, () => `new${++fresh}`);
    const loaded = await throughput(servers);

    const floor = { ongoing: ongoing.get("floor")!, fresh: newSession.get("floor")!, load: loaded.get("floor")! };
    const result: Record<string, number> = {};
    const rows: [string, string][] = [];
    const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 1)} ms`;
    const target = (met: boolean) => (met ? "met" : "NOT met");
    for (const s of servers) {
      if (s.name === "floor") continue;
      const o = ongoing.get(s.name)!;
      const n = newSession.get(s.name)!;
      const l = loaded.get(s.name)!;
      const figures = {
        ongoingP50: o.p50,
        ongoingRatio: o.p50 / floor.ongoing.p50,
        ongoingP95: o.p95,
        cpuMs: o.cpuMs,
        cpuRatio: o.cpuMs / floor.ongoing.cpuMs,
        newP50: n.p50,
        newRatio: n.p50 / floor.fresh.p50,
        turnsPerS: l.turnsPerS,
        throughputRatio: l.turnsPerS / floor.load.turnsPerS,
        loadCpuMs: l.cpuMs,
      };
      for (const [key, value] of Object.entries(figures)) result[`${s.name}.${key}`] = value;
      rows.push(
        [
          `${s.name}: ongoing tool turn p50 (p95)`,
          `${ms(o.p50)} (${ms(o.p95)}) vs floor ${ms(floor.ongoing.p50)} (${ms(floor.ongoing.p95)}): ${fmt(figures.ongoingRatio)}x (target ≤ 1.2x: ${target(figures.ongoingRatio <= 1.2)})`,
        ],
        [
          `${s.name}: new-session tool turn p50`,
          `${ms(n.p50)} vs floor ${ms(floor.fresh.p50)}: ${fmt(figures.newRatio)}x (target ≤ 1.2x: ${target(figures.newRatio <= 1.2)})`,
        ],
        [
          `${s.name}: CPU per ongoing turn`,
          `${ms(o.cpuMs)} vs floor ${ms(floor.ongoing.cpuMs)}: ${fmt(figures.cpuRatio)}x (target ≤ 1.0x: ${target(figures.cpuRatio <= 1)})`,
        ],
        [
          `${s.name}: ${CLIENTS} clients on their own sessions, turns/s`,
          `${fmt(l.turnsPerS, 0)} vs floor ${fmt(floor.load.turnsPerS, 0)}: ${fmt(figures.throughputRatio)}x (target ≥ 0.9x: ${target(figures.throughputRatio >= 0.9)}); CPU per turn ${ms(l.cpuMs)} vs ${ms(floor.load.cpuMs)}`,
        ],
      );
    }
    report(
      `durable floor: the gateway vs a durable minimal gateway (one append and fdatasync per turn), separate processes, same run, ${TURNS} turns each`,
      rows,
    );
    return result;
  } finally {
    for (const s of servers) {
      s.client.close();
      await s.proc.stop();
    }
    await model.stop();
    for (const folder of folders) folder.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDurable();
