import { GrammyError } from "grammy";
import type { ReplyDraft } from "../../channels/channel.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import { type TelegramApi, grammySignal } from "./api.js";
import { telegramHtml } from "./html.js";
import { type TelegramSender, UNPARSABLE, markdownOf, messagesOf } from "./send.js";

/**
 * A reply streamed into a Telegram chat (`streaming: true`): one message,
 * sent with the first text and edited as the text grows, at most once per
 * `streaming_interval_ms` (and never with the text it already shows).
 * These edits are not retried: a 429 waits the `retry_after` Telegram
 * asks for and the next edit shows the text by then; "message is not
 * modified" counts as done; another failure stops the edits until the
 * end, whose edit is retried as any send is (and when even that fails, the
 * reply is sent anew). While streaming, the message shows the
 * first MESSAGE_LIMIT characters; the final edit shows the whole reply,
 * formatted as any text is (send.ts), the part past the limit in more
 * messages.
 */
export class TelegramDraft implements ReplyDraft {
  private latest = "";
  /** The HTML the message shows (or would, when it went as plain text). */
  private shown: string | undefined;
  private messageId: number | undefined;
  private opened = false;
  private finished = false;
  /** Edits stopped after a failure: the reply goes whole at the end. */
  private broken = false;
  private inFlight: Promise<void> | undefined;
  /** Until when the next edit waits (the interval, or a 429's retry_after). */
  private cooling: (() => void) | undefined;

  constructor(
    private readonly parts: {
      client: TelegramApi;
      sender: TelegramSender;
      timer: Timer;
      logger: Logger;
      label: string;
      intervalMs: number;
    },
    private readonly chatId: string,
    private readonly signal: AbortSignal,
  ) {}

  update(text: string): void {
    this.latest = text;
    this.pump();
  }

  async open(): Promise<void> {
    this.opened = true;
    this.pump();
    await this.inFlight;
  }

  async finish(text: string): Promise<void> {
    this.finished = true;
    this.cooling?.();
    this.cooling = undefined;
    await this.inFlight;
    if (this.signal.aborted) return;
    const { sender, logger, label } = this.parts;
    const chunks = messagesOf(markdownOf(text));
    let rest = chunks;
    if (this.messageId !== undefined && chunks.length > 0) {
      rest = chunks.slice(1);
      if (!(await this.showFinal(chunks[0]!))) rest = chunks;
    }
    for (const chunk of rest) {
      try {
        await sender.sendOne(this.chatId, chunk, this.signal);
      } catch (error) {
        if (!this.signal.aborted)
          logger.error(`${label}: could not send to chat ${this.chatId} (${this.parts.client.describe(error)}); the rest of that text was dropped`);
        return;
      }
    }
  }

  /** Sends or edits the message when the text it would show changed, the draft may send, and no edit is under way or cooling down. */
  private pump(): void {
    if (!this.opened || this.finished || this.broken || this.inFlight || this.cooling || this.signal.aborted) return;
    const first = messagesOf(this.latest)[0];
    if (first === undefined) return;
    const html = telegramHtml(first);
    if (html === this.shown) return;
    this.inFlight = this.show(first, html).finally(() => {
      this.inFlight = undefined;
    });
  }

  /** One send or edit of the draft, then the wait before the next. */
  private async show(markdown: string, html: string): Promise<void> {
    const { client, logger, label, intervalMs } = this.parts;
    let waitMs = intervalMs;
    try {
      await this.put(client.direct, markdown, html);
    } catch (error) {
      if (this.signal.aborted) return;
      const retryAfter = error instanceof GrammyError && error.error_code === 429 ? error.parameters.retry_after : undefined;
      if (retryAfter !== undefined) waitMs = Math.max(intervalMs, retryAfter * 1000);
      else {
        this.broken = true;
        logger.warn(`${label}: streaming to chat ${this.chatId} stopped (${client.describe(error)}); the reply is sent whole when it is done`);
        return;
      }
    }
    if (this.finished) return;
    this.cooling = this.parts.timer(waitMs, () => {
      this.cooling = undefined;
      this.pump();
    });
  }

  /** The final text in the draft's message; false when it could not be shown there (it is then sent as new messages). */
  private async showFinal(markdown: string): Promise<boolean> {
    const html = telegramHtml(markdown);
    if (html === this.shown) return true;
    try {
      await this.put(this.parts.client.api, markdown, html);
      return true;
    } catch (error) {
      if (!this.signal.aborted)
        this.parts.logger.warn(
          `${this.parts.label}: could not edit the streamed reply in chat ${this.chatId} (${this.parts.client.describe(error)}); sending it anew`,
        );
      return false;
    }
  }

  /** Sends the message (the first time) or edits it: as HTML, else as plain text when Telegram cannot parse it; "not modified" is done. */
  private async put(api: TelegramApi["api"], markdown: string, html: string): Promise<void> {
    const signal = grammySignal(this.signal);
    const once = async (text: string, parse: boolean) => {
      const options = parse ? { parse_mode: "HTML" as const } : {};
      if (this.messageId === undefined) this.messageId = (await api.sendMessage(this.chatId, text, options, signal)).message_id;
      else await api.editMessageText(this.chatId, this.messageId, text, options, signal);
    };
    try {
      await once(html, true);
    } catch (error) {
      if (isNotModified(error)) {
        this.shown = html;
        return;
      }
      if (!(error instanceof GrammyError && error.error_code === 400 && UNPARSABLE.test(error.description))) throw error;
      await once(markdown, false);
    }
    this.shown = html;
  }
}

const isNotModified = (error: unknown) => error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
