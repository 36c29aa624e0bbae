import type { ChatTransport } from "../../channels/channel.js";
import { splitMessages } from "../../channels/split.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import type { DiscordApi } from "./api.js";

/**
 * Sending to a Discord channel: a text longer than MESSAGE_LIMIT goes as
 * several messages, split at line boundaries with code blocks closed and
 * opened again (channels/split.ts), at most MAX_MESSAGES_PER_TEXT of them.
 * Discord renders the Markdown itself. No message pings anyone: mentions
 * in an answer (`@everyone`, `<@id>`) show as text. "Typing…" (which
 * Discord shows for 10 s) is sent at most every TYPING_EVERY_MS per chat,
 * however often the relay asks, while a turn runs.
 */

/** Discord's limit: characters of a message's content. */
export const MESSAGE_LIMIT = 2000;
export const MAX_MESSAGES_PER_TEXT = 20;
export const TYPING_EVERY_MS = 8000;

/** Whom a sent message may ping: nobody. */
const NO_PINGS = { parse: [] };

export class DiscordSender implements ChatTransport {
  /** Chats "typing" was sent to in the last TYPING_EVERY_MS. */
  private readonly typing = new Set<string>();

  constructor(
    private readonly client: DiscordApi,
    private readonly timer: Timer,
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  async send(chatId: string, text: string, signal: AbortSignal): Promise<void> {
    for (const content of messagesOf(text)) {
      try {
        await this.client.api.channels.createMessage(chatId, { content, allowed_mentions: NO_PINGS }, { signal });
      } catch (error) {
        if (signal.aborted) return;
        this.logger.error(`${this.label}: could not send to channel ${chatId} (${this.client.describe(error)}); the rest of that text was dropped`);
        return;
      }
    }
  }

  async working(chatId: string, signal: AbortSignal): Promise<void> {
    if (this.typing.has(chatId)) return;
    this.typing.add(chatId);
    this.timer(TYPING_EVERY_MS, () => this.typing.delete(chatId));
    try {
      await this.client.api.channels.showTyping(chatId, { signal });
    } catch {
      // Best effort: a missed "typing" is not worth a log line or a retry.
    }
  }
}

/** The messages a text goes as. */
export function messagesOf(text: string): string[] {
  return splitMessages(text, MESSAGE_LIMIT, MAX_MESSAGES_PER_TEXT);
}
