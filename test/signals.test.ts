import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { joinSignals } from "../src/signals.js";

describe("joinSignals", () => {
  it("aborts with the reason of the first source that aborts", () => {
    const a = new AbortController();
    const b = new AbortController();
    const joined = joinSignals([a.signal, undefined, b.signal]);
    expect(joined.signal.aborted).toBe(false);
    b.abort(new Error("b went"));
    expect(joined.signal.aborted).toBe(true);
    expect((joined.signal.reason as Error).message).toBe("b went");
    a.abort(new Error("later"));
    expect((joined.signal.reason as Error).message).toBe("b went");
  });

  it("starts aborted when a source already is", () => {
    const a = new AbortController();
    a.abort("early");
    expect(joinSignals([a.signal]).signal.reason).toBe("early");
  });

  it("leaves nothing behind on a long-lived source once disposed", () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 1000; i++) joinSignals([shutdown.signal, new AbortController().signal]).dispose();
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
  });
});
