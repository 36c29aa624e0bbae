/**
 * When V8 optimizes the gateway's code (src/jit-budget.ts): proven on the
 * real process. `picoclaw` holds V8's optimizing compiler off from its
 * first line; the gateway sets a small interrupt budget at its first turn
 * (gateway.limits.jit_interrupt_budget) and turns the compiler on once
 * busy (jit_busy_turns turns within jit_busy_ms). A module loaded with `--import` (and V8's natives
 * syntax, test only) holds a small function; on SIGUSR2 it runs it `runs`
 * times and says whether V8 has optimized it. 1,000 runs are well under
 * one of V8's own interrupt budgets of bytecode in all, so only the
 * gateway's budget has them optimized; 200,000 runs are some ninety of V8's
 * own budgets, so only a compiler held off leaves them unoptimized.
 */
import { describe, expect, it } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { writeProject } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

/** V8's optimization status bit of a function with optimized code (%GetOptimizationStatus). */
const OPTIMIZED = 16;
const FEW = 1_000;
const MANY = 200_000;

const probe = (runs: number) =>
  `data:text/javascript,${encodeURIComponent(`
function probe(a, b) { const x = a * 2 + b; const y = x % 7; return y > 3 ? x - y : x + y; }
process.on("SIGUSR2", () => {
  let sum = 0;
  for (let i = 0; i < ${runs}; i++) sum += probe(i, 3);
  // Optimized code is compiled on a background thread and taken up by a later call: asked again every 100 ms, for
  // up to 5 s (a busy machine compiles late), each time one more call (far too few to make up a budget of V8's own).
  let asked = 0;
  const ask = () => {
    sum += probe(1, 2);
    const status = %GetOptimizationStatus(probe);
    if ((status & ${OPTIMIZED}) !== 0 || ++asked === 50) process.stderr.write("STATUS " + status + " " + sum + "\\n");
    else setTimeout(ask, 100);
  };
  setTimeout(ask, 100);
});
`)}`;

interface Probe {
  /** gateway.limits. */
  limits?: Record<string, number>;
  /** Turns of the built-in model run (one after the other) before the probe. */
  turns?: number;
  /** How many times the probe runs its function. */
  runs: number;
  /** Node flags of the gateway's own (besides the probe's). */
  nodeArgs?: string[];
}

/** Starts the gateway, runs its turns and the probe, and stops it: whether the probe's function was optimized, and the gateway's output. */
async function probeOptimized({ limits = {}, turns = 0, runs, nodeArgs = [] }: Probe): Promise<{ optimized: boolean; output: string }> {
  const dir = writeProject({ config: { gateway: { port: 0, limits } } });
  const gateway = picoclawProcess(["gateway"], dir, [], { nodeArgs: [...nodeArgs, "--allow-natives-syntax", "--import", probe(runs)], logLevel: "info" });
  await waitFor("the gateway's listening line", () => /listening on http:\/\/\S+/.test(gateway.output()), { instead: gateway.output });
  const url = /listening on (http:\/\/\S+)/.exec(gateway.output())![1];
  for (let i = 0; i < turns; i++) {
    const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) });
    expect(res.status).toBe(200);
  }
  gateway.child.kill("SIGUSR2");
  await waitFor("the probe's status", () => /STATUS (\d+) /.test(gateway.output()), { instead: gateway.output });
  gateway.child.kill("SIGTERM");
  await within("the gateway to exit", gateway.exited);
  return { optimized: (Number(/STATUS (\d+) /.exec(gateway.output())![1]) & OPTIMIZED) !== 0, output: gateway.output() };
}

/**
 * Records, when the optimizing compiler is held off (V8's flags first differ from their defaults), how many modules
 * Node has loaded, and prints at `listening` the built-ins loaded since: Node compiles a built-in from its code cache
 * only under V8's default flags.
 */
const HOLD_WATCH = `data:text/javascript,${encodeURIComponent(`
import v8 from "node:v8";
import http from "node:http";
const set = v8.setFlagsFromString;
let held = -1;
v8.setFlagsFromString = function (flags) {
  if (flags === "--no-turbofan" && held < 0) held = process.moduleLoadList.length;
  return set.call(this, flags);
};
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    const since = held < 0 ? ["(never held)"] : process.moduleLoadList.slice(held).filter((m) => m.startsWith("NativeModule "));
    process.stderr.write("SINCE THE HOLD " + JSON.stringify(since) + "\\n");
  });
  return listen.apply(this, args);
};
`)}`;

describe("when the gateway's code is optimized (needs dist/)", () => {
  it("every Node built-in a gateway loads on its way to listening is loaded before the optimizing compiler is held off (so from Node's code cache)", {
    timeout: 60_000,
  }, async () => {
    const dir = writeProject({ config: { gateway: { port: 0 } } });
    const gateway = picoclawProcess(["gateway"], dir, [], { nodeArgs: ["--import", HOLD_WATCH], logLevel: "warn" });
    await waitFor("the built-ins loaded since the hold", () => /SINCE THE HOLD (\[.*\])/.test(gateway.output()), { instead: gateway.output });
    expect(JSON.parse(/SINCE THE HOLD (\[.*\])/.exec(gateway.output())![1]!)).toEqual([]);
    gateway.child.kill("SIGTERM");
    await within("the gateway to exit", gateway.exited);
  });

  it("a gateway that has started and run one turn keeps V8's optimizing compiler off: a function run 200,000 times is not optimized", {
    timeout: 60_000,
  }, async () => {
    const { optimized, output } = await probeOptimized({ turns: 1, runs: MANY });
    expect(optimized).toBe(false);
    expect(output).not.toContain("optimizing compiler is on");
  });

  it("a node flag of the user's own about V8's compilers is left as it says: with --turbofan the same function is optimized", { timeout: 60_000 }, async () => {
    expect((await probeOptimized({ turns: 1, runs: MANY, nodeArgs: ["--turbofan"] })).optimized).toBe(true);
  });

  it("once busy (jit_busy_turns turns within jit_busy_ms) a function run 1,000 times is optimized, with jit_interrupt_budget; with V8's own budget (0) it is not", {
    timeout: 60_000,
  }, async () => {
    const busy = await probeOptimized({ limits: { jit_busy_turns: 3 }, turns: 3, runs: FEW });
    expect(busy.optimized).toBe(true);
    expect(busy.output).toMatch(/busy: 3 turns within 10000 ms; V8's optimizing compiler is on/);
    expect((await probeOptimized({ limits: { jit_busy_turns: 3, jit_interrupt_budget: 0 }, turns: 3, runs: FEW })).optimized).toBe(false);
  });

  it("turns spread wider than jit_busy_ms do not make the gateway busy", { timeout: 60_000 }, async () => {
    // Three turns within 1 ms cannot happen one after the other over HTTP.
    const { optimized, output } = await probeOptimized({ limits: { jit_busy_turns: 3, jit_busy_ms: 1 }, turns: 3, runs: MANY });
    expect(optimized).toBe(false);
    expect(output).not.toContain("optimizing compiler is on");
  });

  it("jit_busy_turns 0 turns the optimizing compiler on as soon as the gateway has started, with no turn", { timeout: 60_000 }, async () => {
    expect((await probeOptimized({ limits: { jit_busy_turns: 0 }, runs: MANY })).optimized).toBe(true);
  });
});
