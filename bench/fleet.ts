import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { findNginx, type Nginx, startNginx } from "../test/support/nginx.js";
import { type Cluster, findPostgres, startCluster } from "../test/support/postgres.js";
import { ensureBuilt } from "./memory.js";
import { Client, type Proc, ROOT, cpuMs, gatewayProject, startServer, benchConfig } from "./processes.js";
import { fmt, percentile, report } from "./support.js";

/**
 * Store postgres against the default store (jsonl), and one gateway
 * against three behind nginx, measured as a user runs them, same run:
 *
 * - stores: two gateway processes (`node dist/main.js gateway`), the
 *   same config but `session.store` (`jsonl`, the default, its files
 *   written with `O_DSYNC`; `postgres`, a throwaway cluster started with
 *   its flushes on: fsync, synchronous_commit, full page writes), both
 *   calling the fake model process of `bench/floor.ts` (a tool turn: the
 *   model calls `todo read`, then says "done"), each turn in a new session
 *   as floor's are. One client: turns interleaved (blocks of 10), p50 /
 *   p95, and the CPU per turn of the gateway process and, for postgres, of
 *   the database's processes (the server and its backends, from /proc).
 *   10 clients: turns/s and CPU per turn, rounds alternating.
 * - fleet: nginx (the shipped deploy/nginx.conf, its upstream substituted)
 *   in front of one gateway, then of three, all on one database; the same
 *   turns, one client and 10 clients, each in a new session (so nginx
 *   spreads them over the gateways). The machine has 2 cores, shared by
 *   the gateways, the database, nginx, the fake model and the client.
 *
 * Needs Postgres (initdb) and nginx, as the fleet tests do; without them
 * it says so and measures nothing.
 */

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const WARMUP = 50;
const CLIENTS = 10;
const LOAD_ROUND_MS = Number(process.env.BENCH_LOAD_ROUND_MS ?? 3000);
const LOAD_ROUNDS = 2;
const PROCS = path.join(ROOT, "bench", "procs");

interface Target {
  name: string;
  client: Client;
  /** CPU (ms) so far of the processes a turn costs (the gateways; the database's too for store postgres). */
  cpu(): number;
  /** The gateways' part of it. */
  gatewayCpu(): number;
}

/** CPU (ms) of a process and all its children now (the database's backends are the server's). */
function treeCpuMs(pid: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (Number(entry) === pid || ppid === pid) total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

let sessions = 0;
const turn = (t: Target) => t.client.chat("read the plan", `f${++sessions}`);

/** Turns in a row to one target before the next target's (its CPU read around them: targets may share processes). */
const BLOCK = 10;

/**
 * One client's turns, the targets interleaved in blocks of BLOCK turns
 * (each first in turn): p50, p95, and the CPU per turn read around each
 * block, so that targets sharing processes (the fleet's) are told apart.
 */
async function measureTurns(targets: Target[]) {
  for (let i = 0; i < WARMUP; i++) for (const t of targets) await turn(t);
  const times = targets.map(() => [] as number[]);
  const cpu = targets.map(() => ({ all: 0, gateways: 0 }));
  for (let block = 0; block < TURNS / BLOCK; block++) {
    for (let k = 0; k < targets.length; k++) {
      const which = (block + k) % targets.length;
      const t = targets[which]!;
      const [all, gateways] = [t.cpu(), t.gatewayCpu()];
      for (let i = 0; i < BLOCK; i++) {
        const began = performance.now();
        await turn(t);
        times[which]!.push(performance.now() - began);
      }
      cpu[which]!.all += t.cpu() - all;
      cpu[which]!.gateways += t.gatewayCpu() - gateways;
    }
  }
  return targets.map((_, i) => ({
    p50: percentile(times[i]!, 50),
    p95: percentile(times[i]!, 95),
    cpuMs: cpu[i]!.all / times[i]!.length,
    gatewayCpuMs: cpu[i]!.gateways / times[i]!.length,
  }));
}

/** CLIENTS clients at once for `ms`, each sending its next turn when the last is answered. */
async function load(t: Target, ms: number) {
  const cpuBefore = t.cpu();
  const gatewaysBefore = t.gatewayCpu();
  const began = performance.now();
  const until = began + ms;
  let turns = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        await turn(t);
        turns++;
      }
    }),
  );
  return { turns, seconds: (performance.now() - began) / 1000, cpuMs: t.cpu() - cpuBefore, gatewayCpuMs: t.gatewayCpu() - gatewaysBefore };
}

async function measureLoad(targets: Target[]) {
  for (const t of targets) await load(t, 500);
  const sums = targets.map(() => ({ turns: 0, seconds: 0, cpuMs: 0, gatewayCpuMs: 0 }));
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    for (let k = 0; k < targets.length; k++) {
      const which = (round + k) % targets.length;
      const r = await load(targets[which]!, LOAD_ROUND_MS);
      sums[which]!.turns += r.turns;
      sums[which]!.seconds += r.seconds;
      sums[which]!.cpuMs += r.cpuMs;
      sums[which]!.gatewayCpuMs += r.gatewayCpuMs;
    }
  }
  // busy: the gateways' CPU over the wall time, in cores (one process's event loop is at most one).
  return sums.map((s) => ({ turnsPerS: s.turns / s.seconds, cpuMs: s.cpuMs / s.turns, gatewayCores: s.gatewayCpuMs / (s.seconds * 1000) }));
}

export async function benchFleet(): Promise<Record<string, number> | undefined> {
  const pgFound = findPostgres();
  const nginxFound = findNginx();
  if ("reason" in pgFound || "reason" in nginxFound) {
    console.log(`\n== fleet: skipped (${"reason" in pgFound ? pgFound.reason : ""}${"reason" in nginxFound ? ` ${nginxFound.reason}` : ""})`);
    return undefined;
  }
  ensureBuilt();
  const load1Before = loadavg()[0]!;
  const model = await startServer(process.execPath, [path.join(PROCS, "fake-model.mjs")], { cwd: ROOT });
  const procs: Proc[] = [];
  const clients: Client[] = [];
  const folders: { remove(): void }[] = [];
  const proxies: Nginx[] = [];
  let cluster: Cluster | undefined;
  const base = benchConfig(model.url);
  const gatewayIn = async (name: string, config: unknown) => {
    const folder = gatewayProject(name, config);
    folders.push(folder);
    const proc = await startServer(process.execPath, [path.join(ROOT, "dist", "main.js"), "gateway"], {
      cwd: folder.dir,
      env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    });
    procs.push(proc);
    return proc;
  };
  const client = (url: string) => {
    const c = new Client(url, CLIENTS + 2);
    clients.push(c);
    return c;
  };
  try {
    cluster = await startCluster(pgFound, { durable: true });
    const db = cluster;
    const postgresConfig = (url: string) => ({ ...base, session: { store: "postgres", postgres: { url } } });

    // Stores: jsonl vs postgres, one gateway each.
    const jsonl = await gatewayIn("fleet-jsonl", base);
    const onPostgres = await gatewayIn("fleet-pg", postgresConfig(await db.database()));
    const stores: Target[] = [
      { name: "jsonl", client: client(jsonl.url), cpu: () => cpuMs(jsonl.child.pid!), gatewayCpu: () => cpuMs(jsonl.child.pid!) },
      {
        name: "postgres",
        client: client(onPostgres.url),
        cpu: () => cpuMs(onPostgres.child.pid!) + treeCpuMs(db.pid()),
        gatewayCpu: () => cpuMs(onPostgres.child.pid!),
      },
    ];
    const storeTurns = await measureTurns(stores);
    const storeLoad = await measureLoad(stores);
    for (const p of procs.splice(0)) await p.stop();

    // Fleet: nginx in front of one gateway, then of three, on one database.
    const fleetUrl = await db.database();
    const gateways: (Proc & { url: string })[] = [];
    for (let i = 0; i < 3; i++) gateways.push(await gatewayIn(`fleet-${i}`, postgresConfig(fleetUrl)));
    const address = (p: Proc & { url: string }) => new URL(p.url).host;
    const one = await startNginx(nginxFound, [address(gateways[0]!)]);
    proxies.push(one);
    const three = await startNginx(nginxFound, gateways.map(address));
    proxies.push(three);
    const gatewaysCpu = () => gateways.reduce((sum, g) => sum + cpuMs(g.child.pid!), 0);
    const allCpu = () => gatewaysCpu() + treeCpuMs(db.pid());
    const fleets: Target[] = [
      { name: "one gateway", client: client(one.url), cpu: allCpu, gatewayCpu: gatewaysCpu },
      { name: "three gateways", client: client(three.url), cpu: allCpu, gatewayCpu: gatewaysCpu },
    ];
    const fleetTurns = await measureTurns(fleets);
    const fleetLoad = await measureLoad(fleets);
    const load1After = loadavg()[0]!;

    const ms = (n: number) => `${fmt(n, n < 10 ? 2 : 1)} ms`;
    const [j, p] = [storeTurns[0]!, storeTurns[1]!];
    const [f1, f3] = [fleetTurns[0]!, fleetTurns[1]!];
    report("fleet: store postgres vs jsonl; one vs three gateways behind nginx (same run)", [
      [`turn p50 / p95 (${TURNS} turns, one client)`, `jsonl ${ms(j.p50)} / ${ms(j.p95)}; postgres ${ms(p.p50)} / ${ms(p.p95)}: ${fmt(p.p50 / j.p50)}x at p50`],
      [
        "CPU per turn",
        `jsonl ${ms(j.cpuMs)} (gateway); postgres ${ms(p.cpuMs)} (gateway ${ms(p.gatewayCpuMs)} + database ${ms(p.cpuMs - p.gatewayCpuMs)}): ${fmt(p.cpuMs / j.cpuMs)}x`,
      ],
      [
        `${CLIENTS} clients, turns/s`,
        `jsonl ${fmt(storeLoad[0]!.turnsPerS, 0)}, postgres ${fmt(storeLoad[1]!.turnsPerS, 0)}: ${fmt(storeLoad[1]!.turnsPerS / storeLoad[0]!.turnsPerS)}x (CPU per turn ${ms(storeLoad[0]!.cpuMs)} / ${ms(storeLoad[1]!.cpuMs)})`,
      ],
      [
        "behind nginx, turn p50 / p95 (one client)",
        `one gateway ${ms(f1.p50)} / ${ms(f1.p95)}; three ${ms(f3.p50)} / ${ms(f3.p95)}: ${fmt(f3.p50 / f1.p50)}x at p50`,
      ],
      [
        "  CPU per turn (gateways + database)",
        `one ${ms(f1.cpuMs)} (gateways ${ms(f1.gatewayCpuMs)}), three ${ms(f3.cpuMs)} (gateways ${ms(f3.gatewayCpuMs)})`,
      ],
      [
        `behind nginx, ${CLIENTS} clients, turns/s`,
        `one gateway ${fmt(fleetLoad[0]!.turnsPerS, 0)}, three ${fmt(fleetLoad[1]!.turnsPerS, 0)}: ${fmt(fleetLoad[1]!.turnsPerS / fleetLoad[0]!.turnsPerS)}x (CPU per turn ${ms(fleetLoad[0]!.cpuMs)} / ${ms(fleetLoad[1]!.cpuMs)}; gateways busy ${fmt(fleetLoad[0]!.gatewayCores)} / ${fmt(fleetLoad[1]!.gatewayCores)} cores)`,
      ],
      ["load average (1 min), before / after", `${fmt(load1Before)} / ${fmt(load1After)}`],
    ]);
    return {
      jsonlP50: j.p50,
      postgresP50: p.p50,
      jsonlCpuMs: j.cpuMs,
      postgresCpuMs: p.cpuMs,
      postgresGatewayCpuMs: p.gatewayCpuMs,
      jsonlTurnsPerS: storeLoad[0]!.turnsPerS,
      postgresTurnsPerS: storeLoad[1]!.turnsPerS,
      oneGatewayP50: f1.p50,
      threeGatewaysP50: f3.p50,
      oneGatewayTurnsPerS: fleetLoad[0]!.turnsPerS,
      threeGatewaysTurnsPerS: fleetLoad[1]!.turnsPerS,
      oneGatewayCores: fleetLoad[0]!.gatewayCores,
      threeGatewaysCores: fleetLoad[1]!.gatewayCores,
      load1Before,
      load1After,
    };
  } finally {
    for (const c of clients) c.close();
    for (const proxy of proxies) await proxy.stop();
    for (const p of procs) await p.stop();
    await model.stop();
    await cluster?.remove();
    for (const folder of folders) folder.remove();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFleet();
