// The `picoclaw` command itself, once main.ts has held V8's optimizing compiler off: the CLI with the process's own I/O.
import { isatty } from "node:tty";
import { runCli } from "./cli.js";
import { messageOf } from "./errors.js";
import { sizeHeap } from "./heap-sizing.js";
import { collectWhenIdle, dropStartCode } from "./idle-collect.js";
import { optimizeFromNow, setJitBudget } from "./jit-budget.js";

/** Runs the command the process's arguments name, with `env` (the process's environment, from main.ts); `optimizingHeld`: whether main.ts held V8's optimizing compiler off. */
export function runCommand(env: NodeJS.ProcessEnv, optimizingHeld: boolean): void {
  runCli({
    argv: process.argv.slice(2),
    env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(`${text}\n`),
    stderr: (text) => process.stderr.write(`${text}\n`),
    // Made when a command reads it (the chat): `process.stdin` is a stream made on first use, some 3 ms of every start otherwise.
    get stdin() {
      return process.stdin;
    },
    terminal: isatty(0) && process.stderr.isTTY === true,
    prompt: (text) => process.stderr.write(text),
    sizeHeap,
    setJitBudget,
    optimize: () => optimizeFromNow(optimizingHeld),
    collectWhenIdle,
    dropStartCode,
    // Under npm (`npx picoclaw`, a project's `npm start` that runs `picoclaw gateway`) a shell stands between npm and this
    // process: a signal sent to npm ends npm and the shell, never this one, which then stops as the shell goes.
    ...(env.npm_lifecycle_event !== undefined ? { onParentExit: watchParent } : {}),
  }).then(
    (code) => {
      process.exitCode = code;
      // Whatever is still open (a keep-alive socket, a timer) must not keep a finished command alive.
      setTimeout(() => process.exit(code), 1000).unref();
    },
    (error: unknown) => {
      process.stderr.write(`picoclaw: ${messageOf(error)}\n`);
      process.exit(1);
    },
  );
}

/** Calls `listener` once this process's parent is gone (it was given to another parent); returns the function that stops watching. */
function watchParent(listener: () => void): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    listener();
  }, 500);
  timer.unref();
  return () => clearInterval(timer);
}
