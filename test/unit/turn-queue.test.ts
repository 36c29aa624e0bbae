import { describe, expect, it } from "vitest";
import { AbortedError, RequestError } from "../../src/errors.js";
import { KeyQueue } from "../../src/session/key-queue.js";
import { TurnQueue } from "../../src/session/turn-queue.js";

/** Work that runs until the test ends it, saying when it started. */
function gated(log: string[], name: string) {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return {
    work: async () => {
      log.push(name);
      await gate;
      return name;
    },
    open: () => open(),
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe("the per-session queue in front of the turn order", () => {
  it("runs one session's work one at a time in the order asked, other sessions in parallel, and forgets a session once it is idle", async () => {
    const queue = new TurnQueue(new KeyQueue());
    const log: string[] = [];
    const [a1, a2, b1] = [gated(log, "a1"), gated(log, "a2"), gated(log, "b1")];
    const runs = [queue.run("a", a1.work, { bounded: true }), queue.run("a", a2.work, { bounded: true }), queue.run("b", b1.work, { bounded: true })];
    await settle();
    expect(log).toEqual(["a1", "b1"]);
    expect(queue.waitingOf("a")).toEqual({ turns: 1, bytes: 0 });
    a1.open();
    await settle();
    expect(log).toEqual(["a1", "b1", "a2"]);
    a2.open();
    b1.open();
    expect(await Promise.all(runs)).toEqual(["a1", "a2", "b1"]);
    await settle();
    expect(queue.size).toBe(0);
  });

  it("a turn past gateway.limits.max_queued_turns is refused at once with 429 too_many_queued_turns naming the limit, and nothing queued changes", async () => {
    const queue = new TurnQueue(new KeyQueue(), { maxTurns: 2, maxBytes: 1_000_000 });
    const log: string[] = [];
    const [running, w1, w2] = [gated(log, "running"), gated(log, "w1"), gated(log, "w2")];
    const queued = [running, w1, w2].map((g) => queue.run("s", g.work, { bounded: true, bytes: 10 }));
    let refused: unknown;
    try {
      void queue.run("s", async () => log.push("never"), { bounded: true, bytes: 10 });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(RequestError);
    expect(refused).toMatchObject({ code: "too_many_queued_turns", message: expect.stringContaining("gateway.limits.max_queued_turns") });
    expect(queue.waitingOf("s")).toEqual({ turns: 2, bytes: 20 });
    // The gateway's own work (a spawned child's result, a clear) is never refused.
    const own = queue.run("s", async () => "own");
    for (const g of [running, w1, w2]) g.open();
    expect(await Promise.all([...queued, own])).toEqual(["running", "w1", "w2", "own"]);
    expect(log).toEqual(["running", "w1", "w2"]);
  });

  it("a turn whose input would take the waiting bytes past gateway.limits.max_queued_bytes is refused, naming it; one that need not wait is not", async () => {
    const queue = new TurnQueue(new KeyQueue(), { maxTurns: 100, maxBytes: 1000 });
    const log: string[] = [];
    // Nothing waits: even a turn bigger than the limit runs at once.
    const big = gated(log, "big");
    const running = queue.run("s", big.work, { bounded: true, bytes: 5000 });
    void queue.run("s", async () => "w", { bounded: true, bytes: 600 });
    expect(() => queue.run("s", async () => "x", { bounded: true, bytes: 600 })).toThrow(
      /hold 600 bytes, and this one 600 more: over gateway\.limits\.max_queued_bytes \(1000\)/,
    );
    big.open();
    expect(await running).toBe("big");
  });

  it("a waiting turn whose client goes away leaves the queue at once with the abort's reason, never runs, and stops counting", async () => {
    const queue = new TurnQueue(new KeyQueue(), { maxTurns: 1, maxBytes: 1_000_000 });
    const log: string[] = [];
    const running = gated(log, "running");
    const first = queue.run("s", running.work, { bounded: true });
    const client = new AbortController();
    const gone = queue.run("s", async () => log.push("gone ran"), { bounded: true, bytes: 1_000_000, signal: client.signal });
    expect(queue.waitingOf("s")).toEqual({ turns: 1, bytes: 1_000_000 });
    client.abort(new AbortedError("the client went away"));
    await expect(gone).rejects.toThrow("the client went away");
    expect(queue.waitingOf("s")).toEqual({ turns: 0, bytes: 0 });
    // Its place is free at once: the next turn may wait, and runs after the running one.
    const next = queue.run("s", async () => log.push("next"), { bounded: true });
    running.open();
    await first;
    await next;
    expect(log).toEqual(["running", "next"]);
    await settle();
    expect(queue.size).toBe(0);
  });

  it("tells a turn that has to wait that it waits, and when it stops (it runs, or left); one that need not wait is told nothing", async () => {
    const queue = new TurnQueue(new KeyQueue());
    const told: string[] = [];
    const running = gated([], "running");
    const first = queue.run("s", running.work, { bounded: true, onWaiting: (w) => told.push(`first ${w}`) });
    const second = queue.run("s", async () => "second", { bounded: true, onWaiting: (w) => told.push(`second ${w}`) });
    const client = new AbortController();
    const gone = queue.run("s", async () => "gone", { bounded: true, signal: client.signal, onWaiting: (w) => told.push(`gone ${w}`) });
    expect(told).toEqual(["second true", "gone true"]);
    client.abort();
    await expect(gone).rejects.toMatchObject({ code: "aborted" });
    running.open();
    expect(await Promise.all([first, second])).toEqual(["running", "second"]);
    expect(told).toEqual(["second true", "gone true", "gone false", "second false"]);
  });

  it("a turn whose signal aborted before it was asked is not queued at all", async () => {
    const queue = new TurnQueue(new KeyQueue());
    const client = new AbortController();
    client.abort(new AbortedError("already gone"));
    await expect(queue.run("s", async () => "ran", { bounded: true, signal: client.signal })).rejects.toThrow("already gone");
    expect(queue.size).toBe(0);
  });

  it("failed work does not stop the session's next", async () => {
    const queue = new TurnQueue(new KeyQueue());
    const failed = queue.run("s", async () => {
      throw new Error("boom");
    });
    const next = queue.run("s", async () => "after");
    await expect(failed).rejects.toThrow("boom");
    expect(await next).toBe("after");
  });
});
