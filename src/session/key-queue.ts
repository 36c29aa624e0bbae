import type { TurnOrder } from "./turn-order.js";

/**
 * Work run one at a time per key, in the order asked (whether the work
 * before failed or not); keys are forgotten when their queue empties, so
 * idle keys cost nothing. The in-process turn order and the session
 * store's per-session file work are both one of these.
 */
export class KeyQueue implements TurnOrder {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const run = before.then(work);
    const tail = run.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }

  /** Keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }

  /** Resolves once nothing is queued or running, for any key. */
  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.allSettled([...this.tails.values()]);
  }
}
