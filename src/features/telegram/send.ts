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
 * parse goes again as the plain text it came from. A text that is a JSON
 * document as a whole (a tool's output, mostly) goes as a code block, so
 * nothing in it is read as Markdown (`**milk**` in a JSON string stays
 * `**milk**`); a command's reply that ends with headings and nothing under
 * any of them (`/todo` of an empty plan: `# Todos`) says the plan is empty.
 */

/** Telegram's limit: characters of a message's text (after its entities are parsed). */
export const MESSAGE_LIMIT = 4096;
export const MAX_MESSAGES_PER_TEXT = 20;

export const UNPARSABLE = /can't parse entities/i;

export class TelegramSender implements ChatTransport {
  constructor(
    private readonly client: TelegramApi,
    private readonly logger: Logger,
    private readonly label: string,
  ) {}

  async send(chatId: string, text: string, signal: AbortSignal): Promise<void> {
    for (const chunk of messagesOf(markdownOf(text))) {
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

  /** One message (at most MESSAGE_LIMIT characters of Markdown) as Telegram HTML, or as plain text when Telegram cannot parse that; throws what Telegram answered otherwise. */
  async sendOne(chatId: string, markdown: string, signal: AbortSignal): Promise<void> {
    const api = this.client.api;
    try {
      await api.sendMessage(chatId, telegramHtml(markdown), { parse_mode: "HTML" }, grammySignal(signal));
    } catch (error) {
      if (!(error instanceof GrammyError && error.error_code === 400 && UNPARSABLE.test(error.description))) throw error;
      await api.sendMessage(chatId, markdown, {}, grammySignal(signal));
    }
  }
}

/** The most characters read to tell whether a text is JSON. */
const MAX_JSON_CHECK = 1024 * 1024;

/** What a text is sent as, in Markdown: a JSON document as a code block (its `**` stays literal), anything else as it is. */
export function markdownOf(text: string): string {
  if (isJsonDocument(text)) return `\`\`\`json\n${text.trim()}\n\`\`\``;
  return text;
}

/** Whether the whole text is a JSON object or array. */
function isJsonDocument(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length > MAX_JSON_CHECK || !/^[[{]/.test(trimmed) || !/[\]}]$/.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/** The messages a text goes as. */
export function messagesOf(text: string): string[] {
  return splitMessages(text, MESSAGE_LIMIT, MAX_MESSAGES_PER_TEXT);
}
