/**
 * From its first turn on, the gateway has V8 optimize its code sooner
 * (gateway.limits.jit_interrupt_budget, src/jit-budget.ts): proven on the
 * real process. A module loaded with `--import` (and V8's natives syntax,
 * test only) holds a small function; on SIGUSR2 it runs it 1,000 times,
 * well under one of V8's own interrupt budgets of bytecode in all, and
 * says whether V8 has optimized it: after a turn, with the gateway's budget
 * it has, with V8's own (0) it has not; before any turn it has not.
 */
import { describe, expect, it } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { writeProject } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

/** V8's optimization status bit of a function with optimized code (%GetOptimizationStatus). */
const OPTIMIZED = 16;

const PROBE = `data:text/javascript,${encodeURIComponent(`
function probe(a, b) { const x = a * 2 + b; const y = x % 7; return y > 3 ? x - y : x + y; }
process.on("SIGUSR2", () => {
  let sum = 0;
  for (let i = 0; i < 1000; i++) sum += probe(i, 3);
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

/** Starts the gateway with `limits`, has it run a turn (of the built-in model) if `turn`, asks the probe, and stops it: the probe's optimization status. */
async function probeStatus(limits: Record<string, number>, turn: boolean): Promise<number> {
  const dir = writeProject({ config: { gateway: { port: 0, limits } } });
  const gateway = picoclawProcess(["gateway"], dir, [], { nodeArgs: ["--allow-natives-syntax", "--import", PROBE], logLevel: "warn" });
  await waitFor("the gateway's listening line", () => /listening on http:\/\/\S+/.test(gateway.output()), { instead: gateway.output });
  if (turn) {
    const url = /listening on (http:\/\/\S+)/.exec(gateway.output())![1];
    const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) });
    expect(res.status).toBe(200);
  }
  gateway.child.kill("SIGUSR2");
  await waitFor("the probe's status", () => /STATUS (\d+) /.test(gateway.output()), { instead: gateway.output });
  gateway.child.kill("SIGTERM");
  await within("the gateway to exit", gateway.exited);
  return Number(/STATUS (\d+) /.exec(gateway.output())![1]);
}

describe("how soon the gateway's code is optimized (needs dist/)", () => {
  it("a function run 1,000 times after the gateway's first turn is optimized with gateway.limits.jit_interrupt_budget, not with V8's own (0)", {
    timeout: 60_000,
  }, async () => {
    expect((await probeStatus({}, true)) & OPTIMIZED).toBe(OPTIMIZED);
    expect((await probeStatus({ jit_interrupt_budget: 0 }, true)) & OPTIMIZED).toBe(0);
  });

  it("a gateway that has run no turn keeps V8's own budget: the same function is not optimized yet", { timeout: 60_000 }, async () => {
    expect((await probeStatus({}, false)) & OPTIMIZED).toBe(0);
  });
});
