import type { EventBus } from "../../port/events.js";
import type { ChatMessage } from "../../models/message.js";
import type { HistoryStore } from "../../session/history.js";
import type { AgentDefinition } from "../../agents/agent.js";
import { RequestError } from "../../errors.js";
import { oneMessageKey, parseSessionKey } from "../../session/key.js";
import type { ImageInput } from "../turn/images.js";
import type { ConversationInput } from "./message.js";
import { forgetSession } from "./session-control.js";
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
  constructor(
    private readonly deps: {
      history: HistoryStore;
      lifecycle: SessionLifecycle;
      outbox: SessionOutbox;
      events: EventBus;
      /** Refuses images the agent's model cannot take (a 400). */
      acceptImages(agent: AgentDefinition, images: readonly ImageInput[]): void;
    },
  ) {}

  /** Refuses images in a conversation's earlier messages that the agent's model cannot take (the new message's are checked as it runs). */
  checkEarlierImages(agent: AgentDefinition, history: readonly ChatMessage[]): void {
    for (const message of history) {
      if (message.role !== "user" || typeof message.content === "string") continue;
      const images = message.content.flatMap((part) => (part.type === "image_url" ? [part.image_url] : []));
      if (images.length > 0) this.deps.acceptImages(agent, images);
    }
  }

  /**
   * The agent and session key of one message of a conversation: the
   * client's system texts after the agent's prompt, a key made for it (its
   * channel checked), the earlier messages' images checked.
   */
  open(own: AgentDefinition, input: Pick<ConversationInput, "history" | "system" | "channel">, id: string): { agent: AgentDefinition; sessionKey: string } {
    this.checkEarlierImages(own, input.history);
    const system = (input.system ?? []).filter((text) => text.trim() !== "");
    const agent = system.length === 0 ? own : { ...own, prompt: [own.prompt, ...system].filter((text) => text !== "").join("\n\n") };
    const sessionKey = oneMessageKey(agent.id, input.channel, id);
    if (!parseSessionKey(sessionKey)) throw new RequestError("invalid_request", `channel: not a valid channel name: ${JSON.stringify(input.channel)}`);
    return { agent, sessionKey };
  }

  async run<T>(sessionKey: string, history: readonly ChatMessage[], work: () => Promise<T>): Promise<T> {
    const release = await this.deps.history.hold(sessionKey);
    try {
      await this.deps.history.append(sessionKey, history);
      return await work();
    } finally {
      release();
      await forgetSession(this.deps, sessionKey, "release");
    }
  }
}
