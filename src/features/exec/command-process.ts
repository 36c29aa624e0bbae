import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { OutputBuffer } from "./output-buffer.js";

/**
 * One command as a process: started in a process group (and session) of
 * its own with stdin closed, its output kept within bounds (OutputBuffer),
 * killed with its whole group when its time is up or the turn ends, and
 * whatever it left running killed when it exits. A process that left the
 * group (`setsid`, a daemon's double fork) still carries the run's marker
 * variable, and every process carrying it is killed too; under bubblewrap
 * the sandbox's own PID namespace ends them all.
 */

export interface CommandSpec {
  /** The program and its arguments (`sh -c <line>`, or bwrap wrapping it). */
  argv: readonly [string, ...string[]];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** 0: no limit of its own (the signal still ends it). */
  timeoutMs: number;
  signal: AbortSignal;
  /** The most bytes kept of each of stdout and stderr. */
  maxOutputBytes: number;
  /** The marker variable (name and value) every process of this run inherits, for the sweep. */
  marker: { name: string; value: string };
}

export interface CommandOutcome {
  stdout: string;
  stderr: string;
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  timedOut: boolean;
  /** The signal ended it first (/stop, the turn's deadline, shutdown). */
  aborted: boolean;
  /** It could not be started (the program is missing). */
  startError?: string;
}

/** How long the output pipes may stay open after the process ended (a leftover holding them is killed first). */
const PIPE_GRACE_MS = 250;

export function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const stdout = new OutputBuffer(spec.maxOutputBytes);
    const stderr = new OutputBuffer(spec.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const child = spawn(spec.argv[0], spec.argv.slice(1), {
      cwd: spec.cwd,
      env: { ...spec.env, [spec.marker.name]: spec.marker.value },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const kill = () => {
      if (child.pid === undefined) return;
      killGroup(child.pid);
      sweep(spec.marker, child.pid);
    };
    const timer =
      spec.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, spec.timeoutMs)
        : undefined;
    const onAbort = () => {
      aborted = true;
      kill();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    const finish = (code: number | null, startError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      spec.signal.removeEventListener("abort", onAbort);
      resolve({ stdout: stdout.text(), stderr: stderr.text(), code, timedOut, aborted, ...(startError ? { startError } : {}) });
    };
    child.once("error", (error) => {
      if (child.pid === undefined) finish(null, error.message);
    });
    // 'close': the process ended and its output pipes closed.
    const closed = new Promise<void>((done) => child.once("close", () => done()));
    child.once("exit", (code) => {
      // What it started and left running goes with it (and lets go of the pipes).
      kill();
      let grace: NodeJS.Timeout | undefined;
      const late = new Promise<void>((done) => {
        grace = setTimeout(done, PIPE_GRACE_MS).unref();
      });
      void Promise.race([closed, late]).then(() => {
        clearTimeout(grace);
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code);
      });
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/**
 * Kills every process whose environment carries the run's marker, until
 * none is left (a few rounds: one may fork while it is swept). Only
 * processes made since the command started can carry it, and Linux hands
 * out process ids in increasing order, so those from `first` (the
 * command's own) to the last one handed out are read, unless the ids
 * wrapped around meanwhile (then all of them). /proc is read synchronously:
 * its files are the kernel's answers, never a disk's, and a few
 * synchronous reads cost microseconds where their async forms cost
 * milliseconds.
 */
function sweep(marker: { name: string; value: string }, first: number): void {
  if (process.platform !== "linux") return;
  const needle = Buffer.from(`${marker.name}=${marker.value}\0`);
  for (let round = 0; round < 5; round++) {
    let found = 0;
    let pids: number[];
    try {
      // Unreadable: every process is read.
      const last = lastPid();
      const wrapped = !(last >= first);
      pids = readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .map(Number)
        .filter((pid) => pid !== process.pid && (wrapped || pid >= first));
    } catch {
      return;
    }
    for (const pid of pids) {
      let environ: Buffer;
      try {
        environ = readFileSync(`/proc/${pid}/environ`);
      } catch {
        continue;
      }
      if (!carries(environ, needle)) continue;
      found++;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    if (found === 0) return;
  }
}

function lastPid(): number {
  try {
    return Number(readFileSync("/proc/sys/kernel/ns_last_pid", "utf8").trim());
  } catch {
    return Number.NaN;
  }
}

/** Whether a NUL-separated environment holds the entry (at its start or after a NUL). */
function carries(environ: Buffer, entry: Buffer): boolean {
  let at = environ.indexOf(entry);
  while (at >= 0) {
    if (at === 0 || environ[at - 1] === 0) return true;
    at = environ.indexOf(entry, at + 1);
  }
  return false;
}
