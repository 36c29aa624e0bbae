import { AbortedError, messageOf } from "../../errors.js";
import type { EventBus } from "../../port/events.js";
import type { HistoryStore } from "../../session/history.js";
import { agentOfKey, rootKey } from "../../session/key.js";
import type { SessionOutbox } from "../../session/outbox.js";
import type { ClearReason, SessionLifecycle } from "../../session/state.js";
import type { StopBoard } from "../../session/stop-switches.js";
import type { Work } from "../turn/work.js";
import type { BackgroundTurns } from "./background-turns.js";

/** What forgetting a session touches. */
export interface SessionParts {
  lifecycle: SessionLifecycle;
  outbox: SessionOutbox;
  history: HistoryStore;
  events: EventBus;
}

/**
 * Forgets a session (`clear`: /clear; `release`: a one-message session that
 * ended): every per-session store forgets it, and the features stop what
 * they run for it; then its history and those of every session below it
 * (kept subagent histories too) and the deliveries kept for it go, and
 * `session.cleared` says so.
 */
export async function forgetSession(parts: SessionParts, sessionKey: string, reason: ClearReason): Promise<void> {
  // Each step is taken whatever the one before did (a store that failed leaves the others to forget);
  // what failed is thrown at the end, together.
  const failures: string[] = [];
  const step = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      failures.push(messageOf(error));
    }
  };
  await step(() => parts.lifecycle.clear(sessionKey, reason));
  // Last: what the clear stopped may have kept a history or a delivery on its way out.
  await step(() => parts.outbox.clearSession(sessionKey));
  // The session's own history may be only on disk (evicted from memory); its subagents' kept ones are in memory.
  await step(() => parts.history.clear(sessionKey));
  await step(() => parts.history.clearBelow(sessionKey));
  if (failures.length > 0) throw new Error(`forgetting ${sessionKey} failed: ${failures.join("; ")}`);
  parts.events.emit("session.cleared", { agentId: agentOfKey(sessionKey) ?? "", sessionKey, reason });
}

/** `/clear` and `/stop` on a session: what each ends, in what order. */
export class SessionControl {
  constructor(private readonly parts: SessionParts & { work: Work; background: BackgroundTurns; stops: StopBoard }) {}

  /**
   * Empties a session (the caller holds its lock): background turns asked
   * for it are dropped, then it is forgotten (`forgetSession`: the features
   * stop what they run for it, spawned subagents' results voided). Resolves
   * with how many subagents were running below it.
   */
  async clear(sessionKey: string): Promise<number> {
    const subagents = this.parts.work.runningBelow(sessionKey);
    this.parts.background.drop(sessionKey, new AbortedError("the session was cleared"));
    await forgetSession(this.parts, sessionKey, "clear");
    return subagents;
  }

  /** Aborts the session's running and queued turns and every sub-turn below it, at once. */
  async stop(sessionKey: string): Promise<{ stopped: boolean; subagents: number }> {
    const subagents = this.parts.work.runningBelow(sessionKey);
    return { stopped: await this.parts.stops.stop(rootKey(sessionKey)), subagents };
  }
}
