#!/usr/bin/env node
// The `picoclaw` command's launcher. Before the rest of the program loads, V8's optimizing compiler is held off
// (jit-budget.ts): start-up's code runs once, and the gateway turns the compiler on once it is busy. Then the command
// (command.ts), compiled from V8's code cache (code-cache.ts).
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
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

// Each export read, as an ES module's import would read it: that loads the internal modules behind the lazy ones
// (util's parseArgs, crypto's webcrypto, fs's streams).
const requireHere = createRequire(import.meta.url);
for (const name of START_BUILTINS) {
  const loaded = requireHere(`node:${name}`) as Record<string, unknown>;
  for (const key of Object.keys(loaded)) void loaded[key];
}

const nodeFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/).filter(Boolean)];
const optimizingHeld = holdOptimizing(nodeFlags);
// V8's code cache for what loads from here on, made under the same flags (the hold's): dist/code-cache.js, a module of
// its own that the build writes beside this one and leaves out of the bundle (it must be in place before the rest loads).
const codeCache = requireHere("./code-cache.js") as typeof import("./code-cache.js");
codeCache.useCodeCache(path.dirname(fileURLToPath(import.meta.url)));
void import("./command.js").then(({ runCommand }) => runCommand(process.env, optimizingHeld));
