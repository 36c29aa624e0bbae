#!/usr/bin/env node
// The `picoclaw` command. Before the rest of the program loads, V8's optimizing compiler is held off (jit-budget.ts):
// start-up's code runs once, and the gateway turns the compiler on once it is busy. Then the command (command.ts).
import { holdOptimizing } from "./jit-budget.js";

/**
 * The Node built-ins the command loads on its way to listening, loaded first. Node compiles each from a code cache
 * made for V8's default flags; once a flag differs (the hold), a built-in loaded after is compiled from its source:
 * ~20 ms more of every start. test/process/jit-budget.test.ts proves none is left for after the hold.
 */
const START_BUILTINS = [
  "assert",
  "buffer",
  "child_process",
  "cluster",
  "crypto",
  "diagnostics_channel",
  "dns",
  "dns/promises",
  "events",
  "fs",
  "fs/promises",
  "http",
  "os",
  "path",
  "perf_hooks",
  "process",
  "stream",
  "timers/promises",
  "tty",
  "url",
  "util",
  "vm",
  "worker_threads",
  "zlib",
];
// As ES modules, as the program imports them: that reads each one's every export, and loads the internal modules
// behind the lazy ones (util's parseArgs, crypto's webcrypto, fs's streams).
await Promise.all(START_BUILTINS.map((name) => import(`node:${name}`)));

const nodeFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean)];
const optimizingHeld = holdOptimizing(nodeFlags);
const { runCommand } = await import("./command.js");
runCommand(process.env, optimizingHeld);
