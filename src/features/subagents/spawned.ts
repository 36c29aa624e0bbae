import { AbortedError } from "../../errors.js";
import { isWithin } from "../../session/key.js";
import type { ClearReason, SessionScoped } from "../../session/state.js";

/** Why a clear stopped a spawned child (its outcome is `aborted`, with this as its error). */
export const CLEARED = "the conversation was cleared (/clear)";

/** One spawned child, from `spawn` until its result has been handed on or dropped. */
export interface SpawnedChild {
  /** Aborts when the parent's session is cleared. */
  readonly signal: AbortSignal;
  /**
   * Waits for the child's end, then hands its result to `answer` unless a
   * clear voided it meanwhile. The child is forgotten either way.
   */
  settle<T>(done: Promise<T>, answer: (result: T) => void): Promise<void>;
}

/**
 * The spawned (background) children of user sessions. A child outlives the
 * turn that spawned it, so `/clear` of its session must reach it here: the
 * clear stops every child below the session, voids their results (one that
 * arrives after the clear starts no answer turn and is never delivered),
 * and waits until they have ended, so nothing of theirs (a late result, a
 * kept history) comes back after the clear. Registered as per-session state
 * of the subagents feature; the end of a sub-turn (`release`) changes
 * nothing here.
 */
export class SpawnedChildren implements SessionScoped {
  private readonly children = new Set<{ parentKey: string; controller: AbortController; ended: Promise<unknown> }>();

  add(parentKey: string): SpawnedChild {
    const entry = { parentKey, controller: new AbortController(), ended: Promise.resolve() as Promise<unknown> };
    this.children.add(entry);
    return {
      signal: entry.controller.signal,
      settle: async (done, answer) => {
        entry.ended = done.catch(() => {});
        try {
          const result = await done;
          if (!entry.controller.signal.aborted) answer(result);
        } finally {
          this.children.delete(entry);
        }
      },
    };
  }

  async clearSession(sessionKey: string, reason: ClearReason): Promise<void> {
    if (reason !== "clear") return;
    const cleared = [...this.children].filter((child) => isWithin(child.parentKey, sessionKey));
    for (const child of cleared) {
      this.children.delete(child);
      child.controller.abort(new AbortedError(CLEARED));
    }
    await Promise.all(cleared.map((child) => child.ended));
  }

  /** Children not yet settled (for tests and metrics). */
  get size(): number {
    return this.children.size;
  }
}
