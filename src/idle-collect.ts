import v8 from "node:v8";
import vm from "node:vm";
import type { EventBus } from "./port/events.js";

/**
 * The gateway's heap given back once it is idle (gateway.limits.idle_collect_ms).
 *
 * Under load V8 grows the old generation to make room for what the turns
 * promote, and keeps those pages once the load is gone: after the perf
 * load a gateway's RSS stayed at its high-water mark (101 MiB 16 s later,
 * 84 MiB after a full collection), V8's own memory reducer not having
 * started. So once no turn has run for `idleMs` (and none runs), if the old
 * generation V8 holds has grown by `GROWTH_BYTES` or more since the last
 * collection, the gateway runs one, whose freed pages go back to the system.
 *
 * Why only after a real rest: a full collection while nothing runs also
 * drops the optimized code that depended on the turns' short-lived objects
 * (V8 deoptimizes it, "weak objects"), which is compiled again over the
 * next few hundred turns: measured, a turn's CPU went from 2.2 to ~4 ms
 * right after and took ~400 turns to come back, some 0.5 s of CPU in all.
 * Collected after every pause of a quarter second, a load that comes in
 * bursts a few seconds apart ran at 0.7x its throughput. After 10 s
 * without a turn, that cost falls on the first turns after a rest, when
 * nothing else competes for the CPU.
 */

/** Old-generation growth (bytes V8 holds for it) since the last collection that makes one worth its cost. */
export const GROWTH_BYTES = 8 * 1024 * 1024;

/** What an idle collector reads and does: the process's own (collectWhenIdle's), or a test's. */
export interface IdleCollectorPorts {
  /** Bytes the old generation holds now (every V8 space but the young one). */
  heapBytes: () => number;
  /** One full garbage collection. */
  collect: () => void;
  /** The clock, in ms. */
  now: () => number;
  /** Told after each collection: the old generation's bytes before and after. */
  collected?: (before: number, after: number) => void;
}

/** Decides, at each look, whether to collect: no turn for `idleMs`, and grown since the last collection. */
export class IdleCollector {
  /** The old generation's bytes after the last collection (at first: when the collector was made). */
  private baseline: number;
  private running = 0;
  /** When a turn last started or ended. */
  private stirred: number;

  constructor(
    private readonly ports: IdleCollectorPorts,
    private readonly idleMs: number,
  ) {
    this.baseline = ports.heapBytes();
    this.stirred = ports.now();
  }

  turnStarted(): void {
    this.running++;
    this.stirred = this.ports.now();
  }

  turnEnded(): void {
    this.running = Math.max(0, this.running - 1);
    this.stirred = this.ports.now();
  }

  /** One look; returns whether it collected. */
  check(): boolean {
    if (this.running > 0 || this.ports.now() - this.stirred < this.idleMs) return false;
    const before = this.ports.heapBytes();
    // A heap V8 shrank by itself (its own full collection) is the new baseline: growth counts from there.
    if (before < this.baseline) this.baseline = before;
    if (before - this.baseline < GROWTH_BYTES) return false;
    this.ports.collect();
    this.baseline = this.ports.heapBytes();
    this.ports.collected?.(before, this.baseline);
    return true;
  }
}

/** Bytes V8 holds for the old generation: every space but the young one, which V8 sizes by itself. */
function oldGenerationBytes(): number {
  let bytes = 0;
  for (const space of v8.getHeapSpaceStatistics()) if (space.space_name !== "new_space") bytes += space.space_size;
  return bytes;
}

/**
 * This process's heap collected once the turns of `events` have left it
 * idle for `idleMs` (0: never), looked at every second at most (a quarter
 * of `idleMs` when shorter). Returns what stops it. The collection is V8's
 * own `gc()`, which Node gives a new context once `--expose-gc` is set:
 * the gateway's context (and a plugin's code) never gets a global `gc`.
 */
export function collectWhenIdle(idleMs: number, events: Pick<EventBus, "on">, collected?: (before: number, after: number) => void): () => void {
  if (idleMs <= 0) return () => {};
  let gc: (() => void) | undefined;
  const collector = new IdleCollector(
    {
      heapBytes: oldGenerationBytes,
      collect: () => {
        if (!gc) {
          v8.setFlagsFromString("--expose-gc");
          gc = vm.runInNewContext("gc") as () => void;
        }
        // Twice: the second finds the first one's pages swept, and gives back those it left empty.
        gc();
        gc();
      },
      now: () => performance.now(),
      ...(collected ? { collected } : {}),
    },
    idleMs,
  );
  const stops = [events.on("turn.start", () => collector.turnStarted()), events.on("turn.end", () => collector.turnEnded())];
  const timer = setInterval(() => collector.check(), Math.max(10, Math.min(1000, Math.floor(idleMs / 4))));
  timer.unref();
  return () => {
    clearInterval(timer);
    for (const stop of stops) stop();
  };
}
