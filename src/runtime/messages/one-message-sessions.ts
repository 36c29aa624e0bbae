import type { EventBus } from "../../port/events.js";
import type { ChatMessage } from "../../models/message.js";
import type { HistoryStore } from "../../session/history.js";
import { agentOfKey } from "../../session/key.js";
import type { SessionLifecycle } from "../../session/state.js";
import type { SessionOutbox } from "../../session/outbox.js";

/**
 * Sessions that live for one message: a conversation the client keeps and
 * sends whole (a stateless OpenAI-style request). Its messages are set up
 * under a key made for it, held so it is never evicted meanwhile, and when
 * the message settles, however it ends, released as a sub-turn's session
 * is: every per-session state (`release`), then its history (and kept
 * subagent histories below it) and anything kept for it.
 */
export class OneMessageSessions {
  constructor(private readonly deps: { history: HistoryStore; lifecycle: SessionLifecycle; outbox: SessionOutbox; events: EventBus }) {}

  async run<T>(sessionKey: string, history: readonly ChatMessage[], work: () => Promise<T>): Promise<T> {
    const release = await this.deps.history.hold(sessionKey);
    try {
      await this.deps.history.append(sessionKey, history);
      return await work();
    } finally {
      release();
      await this.release(sessionKey);
    }
  }

  private async release(sessionKey: string): Promise<void> {
    const { history, lifecycle, outbox, events } = this.deps;
    try {
      await lifecycle.clear(sessionKey, "release");
    } finally {
      await history.clear(sessionKey);
      await history.clearBelow(sessionKey);
      await outbox.clearSession(sessionKey);
    }
    events.emit("session.cleared", { agentId: agentOfKey(sessionKey) ?? "", sessionKey, reason: "release" });
  }
}
