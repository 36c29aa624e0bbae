import { GrammyError } from "grammy";
import type { Logger } from "../../log.js";
import type { ChatTransport } from "../../channels/channel.js";
import { splitMessages } from "../../channels/split.js";
import { type TelegramApi, grammySignal } from "./api.js";
import { telegramHtml } from "./html.js";

/**
 * Sending to a Telegram chat: a text longer than MESSAGE_LIMIT goes as
 * several messages, split at line boundaries (split.ts), at most
 * MAX_MESSAGES_PER_TEXT of them (the last one then says how much was left
 * out). Each goes as Telegram HTML (html.ts); one Telegram refuses to
 * parse goes again as the plain text it came from.
 */

/** Telegram's limit: characters of a message's text (after its entities are parsed). */
export const MESSAGE_LIMIT = 4096;
export const MAX_MESSAGES_PER_TEXT = 20;

const UNPARSABLE = /can't parse entities/i;

export class TelegramSender implements ChatTransport {
  constructor(
    private readonly client: TelegramApi,
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  async send(chatId: string, text: string, signal: AbortSignal): Promise<void> {
    for (const chunk of messagesOf(text)) {
      try {
        await this.sendOne(chatId, chunk, signal);
      } catch (error) {
        if (signal.aborted) return;
        this.logger.error(`${this.label}: could not send to chat ${chatId} (${this.client.describe(error)}); the rest of that text was dropped`);
        return;
      }
    }
  }

  async working(chatId: string, signal: AbortSignal): Promise<void> {
    try {
      await this.client.api.sendChatAction(chatId, "typing", {}, grammySignal(signal));
    } catch {
      // Best effort: a missed "typing" is not worth a log line or a retry.
    }
  }

  private async sendOne(chatId: string, markdown: string, signal: AbortSignal): Promise<void> {
    const api = this.client.api;
    try {
      await api.sendMessage(chatId, telegramHtml(markdown), { parse_mode: "HTML" }, grammySignal(signal));
    } catch (error) {
      if (!(error instanceof GrammyError && error.error_code === 400 && UNPARSABLE.test(error.description))) throw error;
      await api.sendMessage(chatId, markdown, {}, grammySignal(signal));
    }
  }
}

/** The messages a text goes as. */
export function messagesOf(text: string): string[] {
  return splitMessages(text, MESSAGE_LIMIT, MAX_MESSAGES_PER_TEXT);
}
