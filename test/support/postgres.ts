import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { freePort } from "./listen.js";
import { executable } from "./executable.js";

/**
 * A throwaway Postgres cluster for the tests of store postgres: `initdb` in
 * a temporary folder (as the `postgres` user when the tests run as root,
 * which initdb refuses), started with `pg_ctl` on a free port of 127.0.0.1
 * (and its socket in the same folder), stopped and removed at the end.
 * The binaries are PG_BIN's, else those on PATH, else Debian's
 * (/usr/lib/postgresql/<version>/bin). Without them the tests skip with the
 * reason printed, unless PICOCLAW_REQUIRE_POSTGRES=1 (CI), where they fail.
 */

const run = promisify(execFile);

/** The folder holding initdb and pg_ctl, or why there is none. */
export function findPostgres(env: NodeJS.ProcessEnv = process.env): { bin: string } | { reason: string } {
  if (env.PG_BIN) return executable(path.join(env.PG_BIN, "initdb")) ? { bin: env.PG_BIN } : { reason: `PG_BIN=${env.PG_BIN} holds no initdb` };
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    if (executable(path.join(dir, "initdb")) && executable(path.join(dir, "pg_ctl"))) return { bin: dir };
  }
  const debian = "/usr/lib/postgresql";
  let versions: string[] = [];
  try {
    versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
  } catch {
    // no Debian packages
  }
  for (const version of versions) {
    const bin = path.join(debian, version, "bin");
    if (executable(path.join(bin, "initdb"))) return { bin };
  }
  return { reason: "no initdb: install Debian's package (apt-get install -y postgresql), or set PG_BIN to the folder of initdb and pg_ctl" };
}

/** Whether the Postgres tests run here: skipped (with the reason printed) only where Postgres is missing and not required. */
export function postgresTests(env: NodeJS.ProcessEnv = process.env): { run: boolean; found: { bin: string } | { reason: string } } {
  const found = findPostgres(env);
  const required = env.PICOCLAW_REQUIRE_POSTGRES === "1";
  if ("reason" in found && !required) console.log(`skipping the Postgres tests: ${found.reason}`);
  return { run: "bin" in found || required, found };
}

export interface Cluster {
  /** The `postgres` database's connection string (user postgres, trusted: no password). */
  readonly url: string;
  readonly port: number;
  /** The server's (postmaster's) process id; its backends are its children. */
  pid(): number;
  /** A new, empty database of this cluster, and its connection string. */
  database(): Promise<string>;
  /** Stops the server (`pg_ctl stop -m fast`: connections are cut). */
  stop(): Promise<void>;
  /** Starts it again, on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  remove(): Promise<void>;
}

/**
 * Initialises and starts a cluster in a temporary folder; `remove` it at
 * the end. It skips the disk's flushes (fsync, synchronous_commit and full
 * page writes off: a test needs no crash safety) unless `durable` (the
 * benchmarks, which measure what a real database costs).
 */
export async function startCluster(found: { bin: string } | { reason: string }, opts: { durable?: boolean } = {}): Promise<Cluster> {
  if ("reason" in found) throw new Error(`PICOCLAW_REQUIRE_POSTGRES=1, and ${found.reason}`);
  const root = mkdtempSync(path.join(tmpdir(), "picoclaw-pg-"));
  const data = path.join(root, "data");
  const log = path.join(root, "server.log");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgCommand = (tool: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", path.join(found.bin, tool), ...args]) : run(path.join(found.bin, tool), args);
  await pgCommand("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  const unsafe = opts.durable ? "" : " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1${unsafe} -c max_connections=200`;
  const start = async () => {
    try {
      await pgCommand("pg_ctl", ["start", "-D", data, "-l", log, "-w", "-t", "60", "-o", options]);
    } catch (error) {
      let text = "";
      try {
        text = readFileSync(log, "utf8");
      } catch {
        // no log yet
      }
      throw new Error(`pg_ctl start failed: ${(error as Error).message}\n${text}`);
    }
  };
  const stop = async () => {
    await pgCommand("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"]).catch(() => {});
  };
  await start();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  let databases = 0;
  return {
    url,
    port,
    pid: () => Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    async database() {
      const name = `picoclaw_${process.pid}_${++databases}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${name}`;
    },
    stop,
    start,
    async remove() {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A throwaway cluster for the describe block it is called in: started before its tests (`started` gets it), removed after. */
export function useCluster(found: { bin: string } | { reason: string }, started: (cluster: Cluster) => void): void {
  let cluster: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startCluster(found);
    started(cluster);
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  }, 120_000);
}
