import { describe, expect, it } from "vitest";
import { GROWTH_BYTES, IdleCollector, RETRY_FACTOR, YOUNG_RELEASE_TRIES, YOUNG_SMALL_BYTES } from "../../src/idle-collect.js";

const MiB = 1024 * 1024;

/**
 * An IdleCollector over a heap, a young generation and a clock the test moves: what it collected, and the heap's
 * size after each collection.
 */
function collector(idleMs = 10_000, youngMs = 0) {
  const state = { now: 0, heap: 30 * MiB, live: 20 * MiB, young: 8 * MiB, collections: [] as [number, number][] };
  const idle = new IdleCollector(
    {
      heapBytes: () => state.heap,
      youngBytes: () => state.young,
      collect: () => {
        state.heap = state.live;
      },
      now: () => state.now,
      collected: (before, after) => state.collections.push([before, after]),
    },
    idleMs,
    youngMs,
  );
  return { idle, state };
}

describe("the heap collected once the gateway is idle (gateway.limits.idle_collect_ms)", () => {
  it("after idle_collect_ms without a turn, a heap grown by 8 MiB is collected once, and not again until it grows again", () => {
    const { idle, state } = collector();
    idle.turnStarted();
    state.heap += GROWTH_BYTES;
    idle.turnEnded();
    state.now += 9_999;
    expect(idle.check()).toBe(false);
    state.now += 1;
    expect(idle.check()).toBe(true);
    expect(state.collections).toEqual([[30 * MiB + GROWTH_BYTES, 20 * MiB]]);
    state.now += 60_000;
    expect(idle.check()).toBe(false);
    state.heap = 20 * MiB + GROWTH_BYTES;
    expect(idle.check()).toBe(true);
    expect(state.collections).toHaveLength(2);
  });

  it("a gateway taking turns one after another never collects: a turn started or ended within idle_collect_ms of every look", () => {
    const { idle, state } = collector();
    for (let i = 0; i < 100; i++) {
      idle.turnStarted();
      state.heap += MiB;
      state.now += 5_000;
      idle.turnEnded();
      expect(idle.check()).toBe(false);
    }
    expect(state.collections).toEqual([]);
  });

  it("a turn still running (a slow model) holds collection off however long it runs", () => {
    const { idle, state } = collector();
    idle.turnStarted();
    state.heap += 2 * GROWTH_BYTES;
    state.now += 3_600_000;
    expect(idle.check()).toBe(false);
    idle.turnEnded();
    state.now += 10_000;
    expect(idle.check()).toBe(true);
  });

  it("what a collection kept and that died since (answers held by connections, then closed) is collected on a later try; tries that free little wait twice as long each time", () => {
    const { idle, state } = collector();
    // A load grows the heap to 200 MiB, of which 180 are live while it lasts: collected down to 180.
    state.heap = 200 * MiB;
    state.live = 180 * MiB;
    state.now += 10_000;
    expect(idle.check()).toBe(true);
    // Then it dies, without growing anything: not collected for growth, but after RETRY_FACTOR idle periods.
    state.live = 20 * MiB;
    state.now += 10_000 * RETRY_FACTOR - 1;
    expect(idle.check()).toBe(false);
    state.now += 1;
    expect(idle.check()).toBe(true);
    expect(state.collections.at(-1)).toEqual([180 * MiB, 20 * MiB]);
    // A heap whose live part stays over the floor: collected once for its growth, then tried 120 s and 240 s later
    // (each try that freed little doubles the wait).
    state.live = 40 * MiB;
    state.heap = 20 * MiB + GROWTH_BYTES - 1;
    state.now += 10_000;
    expect(idle.check()).toBe(false);
    state.heap = 40 * MiB;
    let tries = 0;
    const times: number[] = [];
    for (let t = 0; t < 500; t++) {
      state.now += 1_000;
      if (idle.check()) {
        tries++;
        times.push(state.now);
      }
    }
    expect(tries).toBe(3);
    expect(times[2]! - times[1]!).toBe(2 * (times[1]! - times[0]!));
  });

  it("an idle gateway whose heap grew less than 8 MiB is left alone, and growth counts from where V8's own collection left it", () => {
    const { idle, state } = collector();
    state.now += 60_000;
    state.heap += GROWTH_BYTES - 1;
    expect(idle.check()).toBe(false);
    // V8 collected by itself: the heap is smaller than when the collector was made.
    state.heap = 24 * MiB;
    expect(idle.check()).toBe(false);
    state.heap = 24 * MiB + GROWTH_BYTES;
    expect(idle.check()).toBe(true);
    expect(state.collections).toEqual([[24 * MiB + GROWTH_BYTES, 20 * MiB]]);
  });
});

/** An IdleCollector that only gives the young generation back, after `youngMs`. */
const releaser = (youngMs = 250) => collector(Number.POSITIVE_INFINITY, youngMs);

describe("the young generation given back once the gateway rests (gateway.limits.young_release_ms)", () => {
  it("young_release_ms after the last turn, the release is due once, and not again until a turn comes and goes", () => {
    const { idle, state } = releaser();
    idle.turnStarted();
    idle.turnEnded();
    state.now += 249;
    expect(idle.youngDue()).toBeUndefined();
    state.now += 1;
    const stir = idle.youngDue();
    expect(stir).toBeDefined();
    expect(idle.stillResting(stir!)).toBe(true);
    state.now += 60_000;
    expect(idle.youngDue()).toBeUndefined();
    idle.turnStarted();
    idle.turnEnded();
    state.now += 250;
    expect(idle.youngDue()).toBeDefined();
  });

  it("says how long until the release may be due: young_release_ms after the last turn's end, never while a turn runs", () => {
    const { idle, state } = releaser();
    expect(idle.youngWait()).toBe(250);
    state.now += 100;
    expect(idle.youngWait()).toBe(150);
    idle.turnStarted();
    expect(idle.youngWait()).toBe(Number.POSITIVE_INFINITY);
    state.now += 1_000;
    idle.turnEnded();
    expect(idle.youngWait()).toBe(250);
    state.now += 400;
    expect(idle.youngWait()).toBe(0);
    expect(releaser(0).idle.youngWait()).toBe(Number.POSITIVE_INFINITY);
  });

  it("a turn that starts during a release stops it, and a running turn holds the release off however long it runs", () => {
    const { idle, state } = releaser();
    state.now += 250;
    const stir = idle.youngDue()!;
    idle.turnStarted();
    expect(idle.stillResting(stir)).toBe(false);
    state.now += 3_600_000;
    expect(idle.youngDue()).toBeUndefined();
    idle.turnEnded();
    state.now += 250;
    expect(idle.youngDue()).toBeDefined();
  });

  it("a release V8 kept the young generation through (background work kept the rate up) is tried again in the same rest, at most YOUNG_RELEASE_TRIES times; a turn starts the count afresh", () => {
    const { idle, state } = releaser();
    state.now += 250;
    let stir = idle.youngDue()!;
    for (let tried = 1; tried < YOUNG_RELEASE_TRIES; tried++) {
      expect(idle.youngKept(stir)).toBe(true);
      state.now += 850;
      stir = idle.youngDue()!;
      expect(stir).toBeDefined();
    }
    expect(idle.youngKept(stir)).toBe(false);
    state.now += 60_000;
    expect(idle.youngDue()).toBeUndefined();
    // A turn: a new rest, with its own tries; and a release a turn interrupted is not tried again.
    idle.turnStarted();
    expect(idle.youngKept(stir)).toBe(false);
    idle.turnEnded();
    state.now += 250;
    stir = idle.youngDue()!;
    expect(idle.youngKept(stir)).toBe(true);
  });

  it("a young generation already at V8's smallest is left alone, and 0 turns the release off", () => {
    const small = releaser();
    small.state.young = YOUNG_SMALL_BYTES;
    small.state.now += 1_000;
    expect(small.idle.youngDue()).toBeUndefined();
    const off = releaser(0);
    off.state.now += 3_600_000;
    expect(off.idle.youngDue()).toBeUndefined();
  });
});
