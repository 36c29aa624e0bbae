import { spawn } from "node:child_process";
import path from "node:path";
import { Readable } from "node:stream";
import { onTestFinished } from "vitest";
import { runCli } from "../../src/cli.js";
import { recordingLogger, writeProject } from "./project.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** `picoclaw agent` without -m on `lines` as its stdin, in a project of its own (or `cwd`): what it printed, line by line, and its prompts. */
export async function cliChat(lines: string, terminal = false, cwd = writeProject({ config: {} })) {
  const out: string[] = [];
  const err: string[] = [];
  const prompts: string[] = [];
  const code = await runCli({
    argv: ["agent", "--session", "repl"],
    env: {},
    cwd,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    prompt: (t) => prompts.push(t),
    stdin: Readable.from([lines]),
    terminal,
    logger: recordingLogger(),
  });
  return { code, out, err, prompts };
}

/**
 * `node [nodeArgs] dist/main.js <args>` in `cwd`, a process of its own: its
 * exit, and all it printed so far. Its environment is the test runner's
 * without `omit` (a token that must come from the project's .env only),
 * with `env` added, PICOCLAW_CONFIG unset and `logLevel` logs (info).
 * `dist`: another build's folder than the project's. Killed when the test
 * ends if it still runs.
 */
export function picoclawProcess(
  args: string[],
  cwd: string,
  omit: readonly string[] = [],
  {
    nodeArgs = [],
    logLevel = "info",
    dist = path.join(ROOT, "dist"),
    env: extra = {},
  }: { nodeArgs?: readonly string[]; logLevel?: string; dist?: string; env?: Record<string, string> } = {},
) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !omit.includes(name)));
  const child = spawn(process.execPath, [...nodeArgs, path.join(dist, "main.js"), ...args], {
    cwd,
    env: { ...env, ...extra, PICOCLAW_CONFIG: "", PICOCLAW_LOG_LEVEL: logLevel },
    stdio: ["ignore", "pipe", "pipe"],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let output = "";
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}
