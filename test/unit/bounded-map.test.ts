/**
 * What the gateway keeps for its clients a while (Idempotency-Key answers,
 * stored responses) is bounded: by count and bytes, the oldest going first,
 * and by age; an entry pinned (a request still running) is passed over.
 */
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/gateway/bounded-map.js";
import { ManualClock } from "../support/timers.js";

describe("BoundedMap", () => {
  it("lets the oldest go past the count and the bytes, and forgets what is older than its time", () => {
    const clock = new ManualClock(0);
    const map = new BoundedMap<string>({ maxEntries: 2, maxBytes: 10, ttlMs: 1000 }, clock.now);
    map.set("a", "A", 4);
    map.set("b", "B", 4);
    map.set("c", "C", 4);
    expect([map.get("a"), map.get("b"), map.get("c")]).toEqual([undefined, "B", "C"]);
    map.set("big", "X", 9);
    expect([map.get("b"), map.get("c"), map.get("big")]).toEqual([undefined, undefined, "X"]);
    map.set("d", "D", 1);
    expect([map.get("big"), map.get("d")]).toEqual(["X", "D"]);
    clock.advance(1000);
    expect(map.get("big")).toBeUndefined();
    expect(map.size).toBe(1);
  });

  it("passes over a pinned entry", () => {
    const map = new BoundedMap<{ running: boolean }>(
      { maxEntries: 1, maxBytes: 100, ttlMs: 1000 },
      () => 0,
      (v) => v.running,
    );
    map.set("running", { running: true });
    map.set("done", { running: false });
    expect(map.get("running")).toEqual({ running: true });
    expect(map.get("done")).toEqual({ running: false });
    map.set("later", { running: false });
    expect(map.get("done")).toBeUndefined();
    expect(map.get("running")).toEqual({ running: true });
  });
});
