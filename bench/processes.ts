import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Processes for the benchmarks that measure as a user runs things: started,
 * watched from /proc (CPU time, RSS), spoken to over HTTP with a keep-alive
 * client that costs the benchmark little, and stopped by their own pid.
 */

export const ROOT = path.resolve(import.meta.dirname, "..");

/** A free TCP port on 127.0.0.1 (free when asked; the process started next takes it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  /** What it wrote so far, stdout and stderr together. */
  output(): string;
  /** Resolves with the first match of `pattern` in its output; rejects if it exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** SIGTERM to its pid; resolves once it has exited. */
  stop(): Promise<void>;
}

export function startProcess(command: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Proc {
  const child = spawn(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ["ignore", "pipe", "pipe"] });
  // The last 64 KiB only: a gateway logging every request must not grow the benchmark's memory.
  let output = "";
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536);
    for (const waiter of waiters) waiter();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          waiters.delete(check);
          resolve(match);
        };
        waiters.add(check);
        check();
        exited.then(() => {
          waiters.delete(check);
          reject(new Error(`${command} ${args.join(" ")} exited before printing ${pattern}:\n${output}`));
        });
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Starts a process that prints `listening on <url>`, and resolves with its url. */
export async function startServer(command: string, args: string[], opts: { cwd: string; env?: Record<string, string> }): Promise<Proc & { url: string }> {
  const proc = startProcess(command, args, opts);
  try {
    const [, url] = await proc.waitFor(/listening on (http:\/\/\S+)/);
    return { ...proc, url: url! };
  } catch (error) {
    await proc.stop();
    throw error;
  }
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Resident memory of a process, in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
}

/** A keep-alive HTTP client: node:http with a pooled agent, cheaper per request than fetch, so the client takes less of the machine. */
export class Client {
  private readonly agent: Agent;

  constructor(
    private readonly base: string,
    sockets = 16,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets });
  }

  call(method: string, route: string, body?: unknown): Promise<{ status: number; body: string }> {
    const url = new URL(route, this.base);
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method, agent: this.agent, headers: data ? { "content-type": "application/json" } : {} },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(data);
    });
  }

  /** One chat turn; throws unless the reply is `expected`. */
  async chat(message: string, session: string, expected = "done"): Promise<void> {
    const res = await this.call("POST", "/v1/chat", { message, session });
    const reply = res.status === 200 ? (JSON.parse(res.body) as { reply?: unknown }).reply : undefined;
    if (reply !== expected) throw new Error(`unexpected answer from ${this.base}: ${res.status} ${res.body.slice(0, 300)}`);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Polls `GET url` (a fresh connection each time) until it answers 200; resolves with the time it did, from performance.now(). */
export async function firstOk(url: string, everyMs = 2): Promise<number> {
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const req = request(url, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", () => resolve(0));
      req.end();
    });
    if (status === 200) return performance.now();
    await sleep(everyMs);
  }
}
