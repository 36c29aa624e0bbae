import v8 from "node:v8";

/**
 * When and how soon V8 optimizes the gateway's code (gateway.limits.jit_busy_turns,
 * jit_busy_ms and jit_interrupt_budget).
 *
 * V8 runs a function in its interpreter and baseline tier first and, once
 * the function has used up an "interrupt budget" (bytes of bytecode run,
 * 66 KiB on Node 20) a few times, compiles optimized code for it with
 * TurboFan, on a background thread. Both halves cost memory a gateway of
 * little traffic gains nothing from:
 *
 * - TurboFan itself. The first time it runs, its own machine code (~4 MiB
 *   of the Node binary's pages) comes into memory, and its work leaves
 *   the C++ heap some MiB bigger: over a gateway's first 150 turns its RSS
 *   went 61 -> 75 MiB with it, 56 -> 62 without. Start-up's code runs
 *   once but has hot loops (building the config's schemas, parsing
 *   AGENT.md), so V8 optimized some of it during every start: ~4 MiB of a
 *   gateway that had run no turn at all.
 * - V8's own budget is large for a gateway: a turn runs a few hundred of its
 *   functions once or twice each, so most stay unoptimized for thousands
 *   of turns, and a busy gateway's turns cost about a third more CPU
 *   than once warm. A budget of 512 bytes has them optimized within tens
 *   of turns.
 *
 * So `picoclaw` holds TurboFan off from its first line (main.ts, before the
 * rest of the program loads). The gateway sets the small budget at its
 * first turn, so that what its turns run counts towards optimization from
 * then on (a function keeps the budget it was given until it has used it
 * up: set only once busy, a benchmark's 400 turns after 50 of warm-up
 * cost ~10 % more CPU), and
 * turns TurboFan on once it is busy: `jit_busy_turns` turns begun within
 * `jit_busy_ms` (10 in 10 s). A load does that within its first second; a
 * gateway that answers a turn now and then stays in the interpreter and
 * baseline tiers, a millisecond or so more CPU a turn against a model's
 * seconds. Commands other than the gateway turn it on at once. V8 reads
 * both flags whenever it decides, so they apply although code has run.
 * A process started with a flag of its own about V8's compilers (in its
 * command line or NODE_OPTIONS: `--jitless`, `--no-opt`, `--max-opt`...) is
 * left as that flag says.
 */

/** V8 flags about its compilers (as V8 reads them: one or two dashes, `no` with a dash or without, `_` for `-`). */
const COMPILER_FLAG = /^--?(no-?)?(turbofan|opt|maglev|sparkplug|jitless|max-opt|always-turbofan|always-opt|always-sparkplug)(=|$)/;

/** Whether `nodeFlags` (a process's node options) say something about V8's compilers: such a process is left as they say. */
export function ownCompilerFlags(nodeFlags: readonly string[]): boolean {
  return nodeFlags.some((flag) => COMPILER_FLAG.test(flag.replaceAll("_", "-")));
}

/** Holds V8's optimizing compiler off, unless `nodeFlags` (the process's node options) say something about V8's compilers; whether it did. */
export function holdOptimizing(nodeFlags: readonly string[]): boolean {
  if (ownCompilerFlags(nodeFlags)) return false;
  v8.setFlagsFromString("--no-turbofan");
  return true;
}

/** Turns V8's optimizing compiler on again, if `held` it off. */
export function optimizeFromNow(held: boolean): void {
  if (held) v8.setFlagsFromString("--turbofan");
}

/** Sets V8's interrupt budget to `bytes` (0 leaves V8's own). */
export function setJitBudget(bytes: number): void {
  if (bytes > 0) v8.setFlagsFromString(`--interrupt-budget=${bytes}`);
}

/**
 * Told of each turn as it begins, says whether the gateway has become busy:
 * `turns` turns begun within `withinMs` (the last `turns` start times, as
 * `now` gives them). True once, at the turn that makes it so; 1 turn is
 * busy at the first.
 */
export function busyWhen(turns: number, withinMs: number, now: () => number): () => boolean {
  const starts: number[] = new Array(Math.max(1, turns)).fill(0);
  let next = 0;
  let seen = 0;
  let busy = false;
  return () => {
    if (busy) return false;
    const at = now();
    starts[next] = at;
    next = (next + 1) % starts.length;
    seen = Math.min(seen + 1, starts.length);
    // Once full, `next` is the oldest of the last `turns` starts (this one, with a single one).
    busy = seen === starts.length && at - starts[next]! <= withinMs;
    return busy;
  };
}
