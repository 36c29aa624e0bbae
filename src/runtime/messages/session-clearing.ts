import { AbortedError } from "../../errors.js";
import type { EventBus } from "../../port/events.js";
import type { HistoryStore } from "../../session/history.js";
import { agentOfKey, rootKey } from "../../session/key.js";
import type { SessionOutbox } from "../../session/outbox.js";
import type { SessionLifecycle } from "../../session/state.js";
import type { StopBoard } from "../../session/stop-switches.js";
import type { Work } from "../turn/work.js";
import type { BackgroundTurns } from "./background-turns.js";

/** `/clear` and `/stop` on a session: what each ends, in what order. */
export class SessionClearing {
  constructor(
    private readonly parts: {
      work: Work;
      background: BackgroundTurns;
      lifecycle: SessionLifecycle;
      outbox: SessionOutbox;
      history: HistoryStore;
      events: EventBus;
      stops: StopBoard;
    },
  ) {}

  /**
   * Empties a session (the caller holds its lock): background turns asked
   * for it are dropped; every per-session store forgets it, and the
   * features stop what they run for it (spawned subagents, whose results are
   * voided); then the histories of the session and of every subagent below
   * it (kept ones too) and the deliveries kept for it go. Resolves with how
   * many subagents were running below it.
   */
  async clear(sessionKey: string): Promise<number> {
    const { work, background, lifecycle, outbox, history, events } = this.parts;
    const subagents = work.runningBelow(sessionKey);
    background.drop(sessionKey, new AbortedError("the session was cleared"));
    try {
      await lifecycle.clear(sessionKey, "clear");
    } finally {
      // Last: what the clear stopped may have kept a history or a delivery on its way out.
      await outbox.clearSession(sessionKey);
      // The session's own history may be only on disk (evicted from memory); its subagents' kept ones are in memory.
      await history.clear(sessionKey);
      await history.clearBelow(sessionKey);
    }
    events.emit("session.cleared", { agentId: agentOfKey(sessionKey) ?? "", sessionKey, reason: "clear" });
    return subagents;
  }

  /** Aborts the session's running and queued turns and every sub-turn below it, at once. */
  async stop(sessionKey: string): Promise<{ stopped: boolean; subagents: number }> {
    const subagents = this.parts.work.runningBelow(sessionKey);
    return { stopped: await this.parts.stops.stop(rootKey(sessionKey)), subagents };
  }
}
