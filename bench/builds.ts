/**
 * Two builds (or more) of the gateway under the same load, interleaved:
 * which of them costs less CPU a turn once warm. Not part of `npm run
 * bench` (it needs another build: a checkout of another commit, built).
 *
 *   BUILDS=/elsewhere/dist/main.js,dist/main.js npx tsx bench/builds.ts
 *
 * Each build is a `gateway` process (the benchmarks' config: the fake
 * model, `todo` on, sessions on disk), all calling one fake model process.
 * After a 2 s warm-up each, `ROUNDS` rounds (8) of 3 s of `CLIENTS` clients
 * (10), each on a session of its own that every round continues, so the
 * histories reach the default 500 messages; the builds take turns, and
 * each round starts with the next one (a build that always went first
 * would carry the machine's drift). Prints turns/s and CPU per turn
 * (`/proc/<pid>/stat`) of each. Ten clients on 2 cores are bound by CPU:
 * the same build twice differs by up to ~4 % here.
 */
import path from "node:path";
import { Client, type Proc, ROOT, benchConfig, cpuMs, gatewayProject, startServer } from "./processes.js";

interface Build {
  main: string;
  folder: ReturnType<typeof gatewayProject>;
  proc: Proc & { url: string };
  client: Client;
  turns: number;
  cpuMs: number;
  secs: number;
}

const builds = (process.env.BUILDS ?? "").split(",").filter(Boolean);
if (builds.length < 2) throw new Error("BUILDS: give two builds' main.js or more, separated by commas");
const clients = Number(process.env.CLIENTS ?? 10);
const rounds = Number(process.env.ROUNDS ?? 8);

/** `clients` clients on their own sessions for `ms`, on one build. */
async function load(build: Build, ms: number) {
  const until = performance.now() + ms;
  let turns = 0;
  const cpu = cpuMs(build.proc.child.pid!);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      while (performance.now() < until) {
        await build.client.chat("read the plan", `client${i}`);
        turns++;
      }
    }),
  );
  return { turns, secs: (performance.now() - started) / 1000, cpuMs: cpuMs(build.proc.child.pid!) - cpu };
}

const model = await startServer(process.execPath, [path.join(ROOT, "bench", "procs", "fake-model.mjs")], { cwd: ROOT });
const running: Build[] = [];
try {
  for (const [i, main] of builds.entries()) {
    const folder = gatewayProject(`builds${i}`, benchConfig(model.url));
    const proc = await startServer(process.execPath, [path.resolve(main), "gateway"], {
      cwd: folder.dir,
      env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    });
    running.push({ main, folder, proc, client: new Client(proc.url, 12), turns: 0, cpuMs: 0, secs: 0 });
  }
  for (const build of running) await load(build, 2000);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < running.length; k++) {
      const build = running[(round + k) % running.length]!;
      const measured = await load(build, 3000);
      build.turns += measured.turns;
      build.cpuMs += measured.cpuMs;
      build.secs += measured.secs;
    }
  }
  console.log(`builds: ${clients} clients on their own sessions, ${rounds} interleaved rounds of 3 s`);
  for (const build of running) {
    console.log(`  ${(build.turns / build.secs).toFixed(0)} turns/s, ${(build.cpuMs / build.turns).toFixed(3)} ms CPU a turn  ${build.main}`);
  }
} finally {
  for (const build of running) {
    build.client.close();
    await build.proc.stop();
    build.folder.remove();
  }
  await model.stop();
}
