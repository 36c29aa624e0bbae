import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
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

/** A folder (`dir`, else a new one named after `name`) with the shipped `main` agent and, when given, a config file. */
export function gatewayProject(
  name: string,
  config?: unknown,
  dir = mkdtempSync(path.join(tmpdir(), `picoclaw-bench-${name}-`)),
): { dir: string; remove(): void } {
  mkdirSync(path.join(dir, "agents", "main"), { recursive: true });
  copyFileSync(path.join(ROOT, "agents", "main", "AGENT.md"), path.join(dir, "agents", "main", "AGENT.md"));
  if (config !== undefined) writeFileSync(path.join(dir, "picoclaw.config.json"), JSON.stringify(config));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `node [nodeArgs] dist/main.js gateway` in `dir` (its config file or the defaults), on a port of its own; resolves once it listens. */
export function startGateway(dir: string, nodeArgs: string[] = []): Promise<Proc & { url: string }> {
  return startServer(process.execPath, [...nodeArgs, path.join(ROOT, "dist", "main.js"), "gateway"], {
    cwd: dir,
    env: { PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
  });
}

/**
 * Lets a benchmark ask a gateway for a full garbage collection (SIGUSR2, see
 * `collectGarbage`), so that RSS can be read both as it is and with only
 * live memory in the heap. Loaded with `--import`; the gateway itself runs
 * unchanged. Not with `--expose-gc` on the command line, a V8 flag a user's
 * gateway does not run with (and one that makes V8 refuse a code cache:
 * BENCHMARKS.md, "Fourteenth sitting"): `gc` is taken at the first signal
 * instead, as the gateway's own idle collection takes it.
 */
export const GC_ON_SIGNAL = `data:text/javascript,${encodeURIComponent(
  // Two full collections; the heap's live bytes right after the second (whatever runs later allocates is not live
  // then), and time for the sweepers to give freed pages back, before it says so.
  'import v8 from "node:v8";import vm from "node:vm";let gc;const full=()=>{if(!gc){v8.setFlagsFromString("--expose-gc");gc=vm.runInNewContext("gc")}gc()};' +
    'process.on("SIGUSR2",()=>{full();setTimeout(()=>{full();const live=process.memoryUsage().heapUsed;setTimeout(()=>process.stderr.write("gc done "+live+"\\n"),250)},50)})',
)}`;

/** Node options that make a process answer `collectGarbage`. */
export const GC_NODE_ARGS = ["--import", GC_ON_SIGNAL];

/** Runs a full garbage collection in a process started with `GC_NODE_ARGS`; resolves with the bytes its heap still uses. */
export async function collectGarbage(proc: Proc): Promise<number> {
  const said = () => [...proc.output().matchAll(/gc done (\d+)\n/g)];
  const before = said().length;
  proc.child.kill("SIGUSR2");
  while (said().length <= before) await sleep(20);
  return Number(said().at(-1)![1]);
}

/**
 * A reading once the process has settled: what a burst of requests leaves
 * running for a while (meta files written 2 s after a change, one at a
 * time; sockets closing) is not what the sessions hold. Reads every second
 * until the heap's live bytes change by under 1 % (at most 20 s).
 */
export async function settled<T extends { heap: number }>(read: () => Promise<T>): Promise<T> {
  let last = await read();
  for (let i = 0; i < 20; i++) {
    await sleep(1000);
    const next = await read();
    const done = Math.abs(next.heap - last.heap) < 0.01 * last.heap;
    last = next;
    if (done) break;
  }
  return last;
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

/** The benchmarks' gateway config: the default but for the model (the fake model process at `modelUrl`) and `todo` on, the turn's tool. */
export function benchConfig(modelUrl: string) {
  return {
    agents: { defaults: { model_name: "fake" } },
    model_list: [{ model_name: "fake", provider: "openai", model: "bench", api_base: modelUrl }],
    tools: { todo: { enabled: true } },
  };
}
