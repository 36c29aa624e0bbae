import v8 from "node:v8";

/**
 * How soon V8 optimizes the gateway's code (gateway.limits.jit_interrupt_budget).
 *
 * V8 runs a function in its interpreter and baseline tier until the
 * function has used up an "interrupt budget" (bytes of bytecode run, 66 KiB
 * on Node 20) a few times; only then does it compile the optimized code.
 * A turn runs a few hundred of the gateway's functions once or a few times
 * each (routing, the pipeline, the prompt, the request, the answer, the
 * store), so with V8's budget most of them stay unoptimized for thousands
 * of turns, which a gateway of modest traffic may never reach: measured
 * from outside, its turns cost about a third more CPU than once warm. A
 * smaller budget has them optimized within the first tens of turns. Set
 * at the gateway's first turn: start-up's code runs once, and a gateway
 * that has run no turn (health checks only) gains nothing from optimized
 * code, which would cost it ~1.3 MiB idle. V8 reads the flag whenever it
 * resets a function's budget, so it applies although code has run
 * already. 0 leaves V8's own.
 */
export function setJitBudget(bytes: number): void {
  if (bytes > 0) v8.setFlagsFromString(`--interrupt-budget=${bytes}`);
}
