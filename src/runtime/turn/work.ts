import { isWithin } from "../../session/key.js";

/**
 * What the runtime has running: every message, background turn and child's
 * work (so shutdown and one-shot commands can wait for it), and the turns
 * running now by session key (so `/stop` and `/clear` can say how many
 * subagents below a session they ended).
 */
export class Work {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly running = new Map<string, number>();
  private waiting = 0;

  track(task: Promise<unknown>): void {
    this.inflight.add(task);
    const forget = () => this.inflight.delete(task);
    task.then(forget, forget);
  }

  /** A turn of the session started; the returned function says it ended. */
  enter(sessionKey: string): () => void {
    this.running.set(sessionKey, (this.running.get(sessionKey) ?? 0) + 1);
    return () => {
      const left = this.running.get(sessionKey)! - 1;
      if (left === 0) this.running.delete(sessionKey);
      else this.running.set(sessionKey, left);
    };
  }

  /** A message waits for its session's turn before it; the returned function says its own started (once). */
  queue(): () => void {
    this.waiting++;
    let started = false;
    return () => {
      if (started) return;
      started = true;
      this.waiting--;
    };
  }

  /** Sessions with a turn running strictly below `sessionKey` (its subagents, at any depth). */
  runningBelow(sessionKey: string): number {
    let count = 0;
    for (const key of this.running.keys()) if (key !== sessionKey && isWithin(key, sessionKey)) count++;
    return count;
  }

  /** What is tracked now (the grace period of a shutdown waits for it). */
  pending(): Promise<unknown>[] {
    return [...this.inflight];
  }

  /** Resolves once nothing is running or waiting. */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Messages waiting for their session's turn before them. */
  get queuedCount(): number {
    return this.waiting;
  }

  get runningCount(): number {
    return this.running.size;
  }
}
