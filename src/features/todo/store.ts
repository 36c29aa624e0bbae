import { Mutex } from "async-mutex";
import { type SessionScoped, SessionState } from "../../session/state.js";

export const DEFAULT_MAX_PLANS = 256;

export class CapacityError extends Error {}

/** Freezes a JSON-like value all the way down (plans are shared read-only once stored). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

export interface PlanStoreOptions<T> {
  /** Non-empty plans kept at once (each takes one slot). */
  maxPlans?: number;
  /** Whether a plan is empty (an empty plan is deleted and frees its slot). */
  isEmpty?: (plan: T) => boolean;
  /** Makes the store's own copy of a plan it is given, frozen all the way down. */
  own?: (plan: T) => T;
}

/**
 * Plans, keyed by (agent id, session key) from the pipeline, in memory.
 *
 * - The store keeps its own copy of every plan, frozen: callers can neither
 *   change a stored plan through what they passed in nor through what they
 *   read back, so reads need no copy and no lock.
 * - Every change runs under one async-mutex, in arrival order: concurrent
 *   writes to a key are last-writer-wins, a read-modify-write (`update`)
 *   cannot interleave with another change, and the capacity check and the
 *   insert are one step, so of two new keys racing for the last slot exactly
 *   one wins. Changes are synchronous, so while nobody holds the mutex they
 *   run at once without queueing (1k concurrent writers cost no more than 1k
 *   sequential ones); a holder that awaits makes the others wait their turn.
 * - A plan is only ever replaced whole, so no reader sees a partial write.
 * - At most `maxPlans` non-empty plans exist. An empty plan deletes the entry.
 */
export class PlanStore<T> implements SessionScoped {
  readonly maxPlans: number;
  private readonly plans = new SessionState<T>();
  private readonly mutex = new Mutex();
  private readonly isEmpty: (plan: T) => boolean;
  private readonly own: (plan: T) => T;

  constructor(opts: PlanStoreOptions<T> = {}) {
    this.maxPlans = opts.maxPlans ?? DEFAULT_MAX_PLANS;
    this.isEmpty = opts.isEmpty ?? ((plan) => Array.isArray(plan) && plan.length === 0);
    this.own = opts.own ?? ((plan) => deepFreeze(structuredClone(plan)));
  }

  /** The stored plan (frozen), or undefined when there is none. Takes no slot. */
  read(agentId: string, sessionKey: string): T | undefined {
    return this.plans.get(agentId, sessionKey);
  }

  /**
   * Replaces the plan; an empty plan deletes it. A new non-empty plan when
   * every slot is taken throws CapacityError and changes nothing.
   */
  write(agentId: string, sessionKey: string, plan: T): Promise<void> {
    const own = this.own(plan);
    return this.exclusive(() => this.put(agentId, sessionKey, own));
  }

  /**
   * Reads, changes and writes back one plan with no other change to that key
   * in between. `change` gets the current (frozen) plan and returns a new one,
   * or throws to leave everything as it was.
   */
  update<R>(agentId: string, sessionKey: string, change: (current: T | undefined) => { plan: T; result: R }): Promise<R> {
    return this.exclusive(() => {
      const { plan, result } = change(this.read(agentId, sessionKey));
      this.put(agentId, sessionKey, this.own(plan));
      return result;
    });
  }

  /** Drops every agent's plan for the session (/clear, or a sub-turn's end). */
  clearSession(sessionKey: string): Promise<void> {
    return this.exclusive(() => this.plans.clearSession(sessionKey));
  }

  /** Runs a synchronous change under the mutex; at once when nobody holds it. */
  private async exclusive<R>(change: () => R): Promise<R> {
    if (!this.mutex.isLocked()) return change();
    return this.mutex.runExclusive(change);
  }

  /** Non-empty plans held now. */
  get size(): number {
    return this.plans.size;
  }

  private put(agentId: string, sessionKey: string, plan: T): void {
    if (this.isEmpty(plan)) {
      this.plans.delete(agentId, sessionKey);
      return;
    }
    if (!this.plans.has(agentId, sessionKey) && this.plans.size >= this.maxPlans) throw new CapacityError();
    this.plans.set(agentId, sessionKey, plan);
  }
}
