import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { joinSignals } from "../../src/signals.js";

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

  it("aborted by its own abort (a time limit), it carries that reason and lets go of its sources", () => {
    const shutdown = new AbortController();
    const joined = joinSignals([shutdown.signal]);
    joined.abort(new Error("too slow"));
    expect((joined.signal.reason as Error).message).toBe("too slow");
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
    shutdown.abort(new Error("later"));
    expect((joined.signal.reason as Error).message).toBe("too slow");
  });

  it("joined by many at once, a long-lived source warns of no listener leak", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const shutdown = new AbortController();
      const joins = Array.from({ length: 50 }, () => joinSignals([shutdown.signal]));
      expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(50);
      shutdown.abort("stop");
      expect(joins.every((j) => j.signal.aborted)).toBe(true);
      // Node emits the warning on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});
