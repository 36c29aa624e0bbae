import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./listen.js";
import { executable } from "./executable.js";

/**
 * nginx in front of gateways, for the fleet tests and benchmarks, from the
 * shipped deploy/nginx.conf: its upstream servers and its `listen` replaced
 * by the gateways' addresses and a free port of 127.0.0.1, everything else
 * (the maps that find the session, the hash, the proxy settings) as
 * shipped. nginx runs in the foreground as the current user (workers too),
 * with its prefix, pid file, temp folders and logs in a temporary folder,
 * and is stopped (SIGTERM, then SIGKILL) and the folder removed at the end.
 * The binary is NGINX_BIN, else `nginx` on PATH or in /usr/sbin (Debian's
 * package). Without it the tests skip with the reason printed, unless
 * PICOCLAW_REQUIRE_NGINX=1 (CI), where they fail.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..", "..");
export const SHIPPED_CONF = path.join(ROOT, "deploy", "nginx.conf");

/** The nginx binary, or why there is none. */
export function findNginx(env: NodeJS.ProcessEnv = process.env): { bin: string } | { reason: string } {
  if (env.NGINX_BIN) return executable(env.NGINX_BIN) ? { bin: env.NGINX_BIN } : { reason: `NGINX_BIN=${env.NGINX_BIN} is not an executable` };
  for (const dir of [...(env.PATH ?? "").split(path.delimiter).filter(Boolean), "/usr/sbin"]) {
    if (executable(path.join(dir, "nginx"))) return { bin: path.join(dir, "nginx") };
  }
  return { reason: "no nginx: install Debian's package (apt-get install -y nginx), or set NGINX_BIN to its binary" };
}

/** Whether the nginx tests run here: skipped (with the reason printed) only where nginx is missing and not required. */
export function nginxTests(env: NodeJS.ProcessEnv = process.env): { run: boolean; found: { bin: string } | { reason: string } } {
  const found = findNginx(env);
  const required = env.PICOCLAW_REQUIRE_NGINX === "1";
  if ("reason" in found && !required) console.log(`skipping the nginx tests: ${found.reason}`);
  return { run: "bin" in found || required, found };
}

/**
 * The shipped file with its upstream's `server` lines replaced by one per
 * address in `servers` (each keeping the shipped line's parameters) and its
 * `listen` by `listen`. Throws when the shipped file no longer has the
 * shape this relies on (one upstream `picoclaw` with server lines, one
 * listen), so a change to it cannot leave the tests on something else.
 */
export function fleetConf(shipped: string, servers: readonly string[], listen: string): string {
  const upstream = /upstream picoclaw \{\n([\s\S]*?)\n\}/.exec(shipped);
  if (!upstream) throw new Error("deploy/nginx.conf: no `upstream picoclaw { ... }` block");
  const lines = upstream[1]!.split("\n");
  const serverLines = lines.filter((line) => /^\s*server\s+\S+/.test(line));
  if (serverLines.length === 0) throw new Error("deploy/nginx.conf: the upstream lists no server");
  const params = /^\s*server\s+\S+\s*(.*?);\s*$/.exec(serverLines[0]!)![1]!;
  const first = lines.indexOf(serverLines[0]!);
  const kept = lines.filter((line) => !serverLines.includes(line));
  kept.splice(first, 0, ...servers.map((address) => `    server ${address}${params ? ` ${params}` : ""};`));
  const withServers = shipped.replace(upstream[1]!, kept.join("\n"));
  const listens = withServers.match(/^\s*listen\s+[^;]+;\s*$/gm) ?? [];
  if (listens.length !== 1) throw new Error(`deploy/nginx.conf: expected one listen line, found ${listens.length}`);
  return withServers.replace(listens[0]!, `    listen ${listen};`);
}

export interface Nginx {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The configuration it runs (the shipped file, substituted). */
  readonly conf: string;
  /** Its error log so far. */
  errors(): string;
  /** Its access log so far: one line per request, `<status> <upstream addresses> <session hash key> <request>`. */
  access(): string;
  /** Stops it (SIGTERM: nginx's fast shutdown; SIGKILL after 10 s) and removes its folder. */
  stop(): Promise<void>;
}

/** Starts nginx in front of `servers` (host:port each) with the shipped config; resolves once it answers. */
export async function startNginx(found: { bin: string } | { reason: string }, servers: readonly string[]): Promise<Nginx> {
  if ("reason" in found) throw new Error(`PICOCLAW_REQUIRE_NGINX=1, and ${found.reason}`);
  const root = mkdtempSync(path.join(tmpdir(), "picoclaw-nginx-"));
  for (const dir of ["body", "proxy", "fastcgi", "uwsgi", "scgi", "logs"]) mkdirSync(path.join(root, dir));
  const port = await freePort();
  const conf = fleetConf(readFileSync(SHIPPED_CONF, "utf8"), servers, `127.0.0.1:${port}`);
  writeFileSync(path.join(root, "picoclaw.conf"), conf);
  const errorLog = path.join(root, "logs", "error.log");
  const accessLog = path.join(root, "logs", "access.log");
  // The main file a Debian host has around conf.d/, with every path in the temporary folder.
  writeFileSync(
    path.join(root, "nginx.conf"),
    [
      "worker_processes 1;",
      "events { worker_connections 1024; }",
      "http {",
      `  client_body_temp_path ${root}/body;`,
      `  proxy_temp_path ${root}/proxy;`,
      `  fastcgi_temp_path ${root}/fastcgi;`,
      `  uwsgi_temp_path ${root}/uwsgi;`,
      `  scgi_temp_path ${root}/scgi;`,
      "  log_format fleet '$status $upstream_addr $picoclaw_session \"$request\"';",
      `  access_log ${accessLog} fleet;`,
      `  include ${root}/picoclaw.conf;`,
      "}",
      "",
    ].join("\n"),
  );
  // As root, nginx's workers would become `nobody`, who cannot write the temporary folder: they stay root.
  const user = process.getuid?.() === 0 ? " user root;" : "";
  const globals = `daemon off; master_process on; pid ${root}/nginx.pid; error_log ${errorLog} warn;${user}`;
  const args = ["-p", root, "-c", path.join(root, "nginx.conf"), "-g", globals];
  try {
    await run(found.bin, [...args, "-t", "-q"]);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`nginx -t refused the config generated from deploy/nginx.conf: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const child: ChildProcess = spawn(found.bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(root, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  // Up once it answers (anything: /health goes to some gateway).
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited at start: ${stderr}${read(errorLog)}`);
    const up = await fetch(`${url}/health`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (i > 500) {
      await stop();
      throw new Error(`nginx did not answer on ${url}: ${stderr}${read(errorLog)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { url, conf, errors: () => read(errorLog), access: () => read(accessLog), stop };
}
