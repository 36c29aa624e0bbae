import { Semaphore } from "async-mutex";
import { abortReason } from "../../errors.js";
import { depth } from "../../session/key.js";
import { type Timer, joinSignals } from "../../signals.js";

export interface PlaceLimits {
  /** Running children per parent. */
  max_concurrent: number;
  /** Running children in the whole gateway. */
  max_running: number;
  /** How long a child waits for its places. */
  concurrency_timeout_ms: number;
}

/**
 * Places for running children: at most `max_concurrent` per parent and
 * `max_running` in the whole gateway, so one message cannot start depth ×
 * fan-out children and one busy conversation cannot take every place.
 *
 * A child waits for both places, `concurrency_timeout_ms` in all. One asked
 * for by a subagent waits for its parent's place the same way, but gets its
 * answer at once when the gateway is full: its parent holds a gateway place
 * itself, and if subagents waited for places held by other waiting
 * subagents, all of them could sit out the whole timeout. A child of a
 * user's own turn holds nothing while it waits, so it may.
 */
export class Places {
  private readonly parents = new Map<string, { semaphore: Semaphore; users: number }>();
  private readonly gateway: Semaphore;

  constructor(
    private readonly limits: PlaceLimits,
    private readonly timer: Timer,
  ) {
    this.gateway = new Semaphore(limits.max_running);
  }

  /**
   * Takes a place for a child of `parentKey`. Resolves with the function that
   * gives it back, or with the error the model gets when none came free;
   * rejects when `signal` aborts first.
   */
  async take(parentKey: string, signal: AbortSignal): Promise<(() => void) | string> {
    signal.throwIfAborted();
    let entry = this.parents.get(parentKey);
    if (!entry) this.parents.set(parentKey, (entry = { semaphore: new Semaphore(this.limits.max_concurrent), users: 0 }));
    entry.users++;
    const held = entry;
    const forget = () => {
      if (--held.users === 0 && this.parents.get(parentKey) === held) this.parents.delete(parentKey);
    };
    const expired = new AbortController();
    const cancelTimer = this.timer(this.limits.concurrency_timeout_ms, () => expired.abort());
    const waiting = joinSignals([signal, expired.signal]);
    let releaseParent: (() => void) | undefined;
    try {
      releaseParent = await acquire(held.semaphore, waiting.signal);
      if (depth(parentKey) > 0 && this.gateway.getValue() <= 0) {
        releaseParent();
        forget();
        return this.gatewayFull(false);
      }
      const releaseGateway = await acquire(this.gateway, waiting.signal);
      const parent = releaseParent;
      let given = false;
      return () => {
        if (given) return;
        given = true;
        releaseGateway();
        parent();
        forget();
      };
    } catch (error) {
      releaseParent?.();
      forget();
      if (signal.aborted || !expired.signal.aborted) throw error;
      return releaseParent ? this.gatewayFull(true) : this.parentFull();
    } finally {
      cancelTimer();
      waiting.dispose();
    }
  }

  /** Parents with children running or waiting (for tests and metrics). */
  get parentCount(): number {
    return this.parents.size;
  }

  /** Children running in the whole gateway. */
  get running(): number {
    return this.limits.max_running - this.gateway.getValue();
  }

  private parentFull(): string {
    const { max_concurrent, concurrency_timeout_ms } = this.limits;
    return `too many subagents are running for this conversation (agents.defaults.subturn.max_concurrent = ${max_concurrent}) and none finished within ${concurrency_timeout_ms} ms; wait for them or do this yourself`;
  }

  private gatewayFull(waited: boolean): string {
    const { max_running, concurrency_timeout_ms } = this.limits;
    const head = `too many subagents are running in the gateway (agents.defaults.subturn.max_running = ${max_running})`;
    return waited ? `${head} and none finished within ${concurrency_timeout_ms} ms; try again later or do this yourself` : `${head}; do this work yourself`;
  }
}

/** One place of `semaphore`, or a rejection with the signal's reason; a place that comes after the abort goes straight back. */
function acquire(semaphore: Semaphore, signal: AbortSignal): Promise<() => void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    let gaveUp = false;
    const onAbort = () => {
      gaveUp = true;
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    semaphore.acquire().then(
      ([, release]) => {
        signal.removeEventListener("abort", onAbort);
        if (gaveUp) release();
        else resolve(release);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
