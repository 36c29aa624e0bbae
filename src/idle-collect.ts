import v8 from "node:v8";
import vm from "node:vm";
import { youngGenerationBytes } from "./heap-sizing.js";
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
/** A heap that stayed GROWTH_BYTES over its floor is tried again this many idle periods after the last collection. */
export const RETRY_FACTOR = 6;
/** The longest wait between two such tries. */
export const MAX_RETRY_MS = 3_600_000;

/**
 * The young generation given back (gateway.limits.young_release_ms). V8
 * shrinks its young generation, and gives the pages back, only at a
 * scavenge that finds the allocation rate low, and it reckons the rate from
 * its last ten or so scavenges (or the last 5 s): a gateway whose load
 * stopped keeps the young generation the load grew (8 MiB at the cap),
 * long after the last turn, until V8's memory reducer runs some 8-10 s
 * later. Once no turn has run for `young_release_ms`, the gateway runs
 * scavenges YOUNG_RELEASE_GAP_MS apart until V8 shrinks it (about 13 of
 * them on Node 20), at most YOUNG_RELEASE_STEPS. Not closer together: what
 * the gateway allocates between two (a timer, V8's statistics, the heap
 * sizer's observer) would then be over V8's 1,000 bytes a millisecond,
 * and it would never see a low rate (at 10 ms apart it did not). A scavenge of
 * an idle young generation takes a fraction of a millisecond, and unlike a
 * full collection drops no optimized code; a load that comes back grows the
 * young generation again within its first scavenges.
 */
export const YOUNG_RELEASE_STEPS = 24;
export const YOUNG_RELEASE_GAP_MS = 25;
/**
 * Releases one rest may try: one that ran its steps without V8 shrinking
 * the young generation (what the gateway still did in the background kept
 * the rate up: after a load of new sessions, their meta files written for
 * a second or two) is tried again `young_release_ms` later, this many
 * times in all (each try some 24 scavenges of a fraction of a ms).
 */
export const YOUNG_RELEASE_TRIES = 8;
/** Young-generation bytes below which there is nothing worth giving back (V8's smallest is 1 MiB). */
export const YOUNG_SMALL_BYTES = 2 * 1024 * 1024;

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
  /** Bytes V8 holds for the young generation now (both semi-spaces' capacity). */
  youngBytes?: () => number;
}

/**
 * Decides, at each look, whether to collect (no turn for `idleMs`, and grown since the last collection, or stayed over
 * the floor for a while), and when to give the young generation back (no turn for `youngMs`).
 */
export class IdleCollector {
  /** The old generation's bytes after the last collection (at first: when the collector was made). */
  private baseline: number;
  /** The smallest the old generation has been after a collection (or at first). */
  private floor: number;
  /** When the last collection ran (at first: when the collector was made). */
  private collectedAt: number;
  /** How long after the last collection one more is tried for a heap that stayed over the floor (doubling while it frees little). */
  private retryMs: number;
  private running = 0;
  /** When a turn last started or ended. */
  private stirred: number;
  /** Turns started or ended so far: a young-generation release stops when this moves. */
  private stirs = 0;
  /** `stirs` when the young generation was last released (or found small): once per rest. */
  private youngReleasedAt = -1;
  /** Releases tried in this rest (`youngTriesAt` its `stirs`). */
  private youngTries = 0;
  private youngTriesAt = -1;

  constructor(
    private readonly ports: IdleCollectorPorts,
    private readonly idleMs: number,
    private readonly youngMs = 0,
  ) {
    this.baseline = ports.heapBytes();
    this.floor = this.baseline;
    this.stirred = ports.now();
    this.collectedAt = this.stirred;
    this.retryMs = idleMs * RETRY_FACTOR;
  }

  turnStarted(): void {
    this.running++;
    this.stirs++;
    this.stirred = this.ports.now();
  }

  turnEnded(): void {
    this.running = Math.max(0, this.running - 1);
    this.stirs++;
    this.stirred = this.ports.now();
  }

  /**
   * One look at the young generation: whether to give it back now (no turn
   * for `youngMs`, not yet done in this rest, and it is more than V8's
   * smallest). Returns the `stir` the release belongs to, or undefined.
   */
  youngDue(): number | undefined {
    if (this.youngMs <= 0 || this.running > 0 || this.youngReleasedAt === this.stirs) return undefined;
    if (this.ports.now() - this.stirred < this.youngMs) return undefined;
    this.youngReleasedAt = this.stirs;
    if ((this.ports.youngBytes?.() ?? 0) <= YOUNG_SMALL_BYTES) return undefined;
    if (this.youngTriesAt !== this.stirs) {
      this.youngTriesAt = this.stirs;
      this.youngTries = 0;
    }
    this.youngTries++;
    return this.stirs;
  }

  /**
   * A release begun at `stir` ran its steps and V8 kept the young
   * generation: whether to try again (`youngMs` later) in the same rest, at
   * most YOUNG_RELEASE_TRIES in all. A turn since ends the rest.
   */
  youngKept(stir: number): boolean {
    if (!this.stillResting(stir) || this.youngTries >= YOUNG_RELEASE_TRIES) return false;
    this.youngReleasedAt = -1;
    return true;
  }

  /** Ms until a young-generation release may be due: 0 now, Infinity while a turn runs or when it is off. */
  youngWait(): number {
    if (this.youngMs <= 0 || this.running > 0) return Number.POSITIVE_INFINITY;
    return Math.max(0, this.youngMs - (this.ports.now() - this.stirred));
  }

  /** Whether a release begun at `stir` goes on: no turn has started or ended since. */
  stillResting(stir: number): boolean {
    return this.stirs === stir && this.running === 0;
  }

  /**
   * One look; returns whether it collected. A heap that grew since the last
   * collection is collected once idle. So is, now and then, one that stayed
   * well over the smallest it has been: what a collection kept may have
   * died since without growing anything (the bytes of answers whose
   * connections were held open, then closed), and V8 collects nothing while
   * nothing is allocated. Each such try that frees little waits twice as
   * long for the next (from RETRY_FACTOR idle periods to an hour).
   */
  check(): boolean {
    const now = this.ports.now();
    if (this.running > 0 || now - this.stirred < this.idleMs) return false;
    const before = this.ports.heapBytes();
    // A heap V8 shrank by itself (its own full collection) is the new baseline: growth counts from there.
    if (before < this.baseline) this.baseline = before;
    if (before < this.floor) this.floor = before;
    const grown = before - this.baseline >= GROWTH_BYTES;
    const stayedOver = before - this.floor >= GROWTH_BYTES && now - this.collectedAt >= this.retryMs;
    if (!grown && !stayedOver) return false;
    this.ports.collect();
    this.baseline = this.ports.heapBytes();
    this.floor = Math.min(this.floor, this.baseline);
    this.collectedAt = now;
    this.retryMs = before - this.baseline >= GROWTH_BYTES ? this.idleMs * RETRY_FACTOR : Math.min(MAX_RETRY_MS, this.retryMs * 2);
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

/** V8's own `gc`, which Node gives a new context once `--expose-gc` is set: the gateway's context (and a plugin's code) never gets a global `gc`. */
let exposedGc: ((options?: { type: "minor" | "major" }) => void) | undefined;
function v8Gc(): (options?: { type: "minor" | "major" }) => void {
  if (!exposedGc) {
    v8.setFlagsFromString("--expose-gc");
    exposedGc = vm.runInNewContext("gc") as (options?: { type: "minor" | "major" }) => void;
  }
  return exposedGc;
}

/**
 * Drops the compiled code (bytecode) of every function that is not running
 * now and compacts the heap, with two full collections. Called once, when
 * the gateway has started and before any turn: what start-up alone ran
 * (reading the config, assembling the runtime, each module's own top
 * level) would otherwise stay until V8 had seen it unused through several
 * full collections, and the pages it sat on stay part-empty after that;
 * what a turn runs is compiled again as it first runs. V8's own flags for
 * it (bytecode flushing without waiting for it to age, compaction on
 * every full collection) are set for these two collections only. Returns
 * the bytes V8 held for the old generation before and after.
 */
export function dropStartCode(): { before: number; after: number } {
  const gc = v8Gc();
  const before = oldGenerationBytes();
  v8.setFlagsFromString("--stress-flush-code");
  v8.setFlagsFromString("--compact-on-every-full-gc");
  try {
    gc();
    gc();
  } finally {
    v8.setFlagsFromString("--no-stress-flush-code");
    v8.setFlagsFromString("--no-compact-on-every-full-gc");
  }
  return { before, after: oldGenerationBytes() };
}

/**
 * This process's heap collected once the turns of `events` have left it
 * idle for `idleMs` (0: never), looked at every second at most (a quarter
 * of `idleMs` when shorter), and its young generation given back once they
 * have left it resting for `youngMs` (0: never). Returns what stops it. The collection is V8's
 * own `gc()`, which Node gives a new context once `--expose-gc` is set:
 * the gateway's context (and a plugin's code) never gets a global `gc`.
 */
export function collectWhenIdle(idleMs: number, events: Pick<EventBus, "on">, collected?: (before: number, after: number) => void, youngMs = 0): () => void {
  if (idleMs <= 0 && youngMs <= 0) return () => {};
  const collector = new IdleCollector(
    {
      heapBytes: oldGenerationBytes,
      youngBytes: youngGenerationBytes,
      collect: () => {
        const gc = v8Gc();
        // Twice: the second finds the first one's pages swept, and gives back those it left empty.
        gc();
        gc();
      },
      now: () => performance.now(),
      ...(collected ? { collected } : {}),
    },
    idleMs > 0 ? idleMs : Number.POSITIVE_INFINITY,
    youngMs,
  );
  let releasing: NodeJS.Timeout | undefined;
  const release = (stir: number) => {
    const gc = v8Gc();
    const before = youngGenerationBytes();
    let steps = 0;
    releasing = setInterval(() => {
      if (!collector.stillResting(stir)) return stopReleasing();
      if (steps++ >= YOUNG_RELEASE_STEPS) {
        stopReleasing();
        if (collector.youngKept(stir)) lookAtYoung(youngMs);
        return;
      }
      gc({ type: "minor" });
      if (youngGenerationBytes() < before) stopReleasing();
    }, YOUNG_RELEASE_GAP_MS);
    releasing.unref();
  };
  const stopReleasing = () => {
    clearInterval(releasing);
    releasing = undefined;
  };
  // The release is looked at when it may be due: `youngMs` after start-up and after each turn's end (one timer).
  let due: NodeJS.Timeout | undefined;
  const lookAtYoung = (ms: number) => {
    clearTimeout(due);
    due = setTimeout(() => {
      due = undefined;
      // A release still running (its next step will see the turn that came, and stop) is looked past.
      if (releasing) return lookAtYoung(YOUNG_RELEASE_GAP_MS);
      // A timer may fire a little before its time by the process's clock: it looks again then.
      const wait = collector.youngWait();
      if (wait > 0) {
        if (Number.isFinite(wait)) lookAtYoung(wait);
        return;
      }
      const stir = collector.youngDue();
      if (stir !== undefined) release(stir);
    }, ms);
    due.unref();
  };
  const stops = [
    events.on("turn.start", () => collector.turnStarted()),
    events.on("turn.end", () => {
      collector.turnEnded();
      if (youngMs > 0) lookAtYoung(youngMs);
    }),
  ];
  if (youngMs > 0) lookAtYoung(youngMs);
  const timer = idleMs > 0 ? setInterval(() => collector.check(), Math.max(10, Math.min(1000, Math.floor(idleMs / 4)))) : undefined;
  timer?.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(due);
    stopReleasing();
    for (const stop of stops) stop();
  };
}
