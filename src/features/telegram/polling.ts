import type { Update, UserFromGetMe } from "grammy/types";
import { GrammyError } from "grammy";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import { wait } from "../../channels/wait.js";
import { type TelegramApi, grammySignal, isTokenRefused } from "./api.js";

/**
 * Long polling: `getUpdates` with the next offset, held by Telegram up to
 * POLL_TIMEOUT_S, again and again. Updates are handed on one by one and
 * never awaited (a turn may take minutes; polling goes on meanwhile).
 *
 * A failure is logged and polling goes on after a backoff (1 s doubling to
 * POLL_BACKOFF_MAX_MS, or the `retry_after` a 429 asks for), except when
 * Telegram refuses the token: that stops the bot, loudly. `stop` aborts the
 * poll under way and confirms the updates already taken (one `getUpdates`
 * with the next offset), so a restart does not answer them twice; after it
 * resolves no request is made.
 */

export const POLL_TIMEOUT_S = 30;
export const POLL_BACKOFF_MAX_MS = 30_000;
/** How long stopping waits for Telegram to confirm the updates taken. */
export const CONFIRM_TIMEOUT_MS = 5_000;

export const pollBackoffMs = (failures: number): number => Math.min(POLL_BACKOFF_MAX_MS, 1000 * 2 ** (failures - 1));

export interface PollerOptions {
  client: TelegramApi;
  timer: Timer;
  logger: Logger;
  /** How log lines name the channel. */
  label: string;
  /** Where the token is configured (`channel_list[0].token`), for the message when Telegram refuses it. */
  tokenPath: string;
  onUpdate(update: Update, me: UserFromGetMe): void;
}

export class Poller {
  private readonly abort = new AbortController();
  private me: UserFromGetMe | undefined;
  /** The next update id wanted. */
  private offset = 0;
  /** The offset Telegram last got: updates below it are confirmed. */
  private confirmed = 0;
  private loop: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly opts: PollerOptions) {}

  /**
   * Asks Telegram who the bot is, then polls in the background. A refused
   * token throws (the channel does not start); Telegram out of reach is a
   * warning, and polling keeps trying.
   */
  async start(): Promise<void> {
    const { client, logger, label } = this.opts;
    try {
      this.me = await client.api.getMe(grammySignal(this.abort.signal));
    } catch (error) {
      if (this.stopped) return;
      if (isTokenRefused(error)) throw new Error(`the Bot API refused the token (${client.describe(error)}); check ${this.opts.tokenPath}`);
      logger.warn(`${label}: cannot reach the Bot API yet (${client.describe(error)}); trying again in the background`);
    }
    if (this.stopped) return;
    if (this.me) this.ready(this.me);
    this.loop = this.run().catch((error: unknown) => logger.error(`${label}: polling ended: ${client.describe(error)}`));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    await this.loop;
    if (this.offset > this.confirmed) await this.confirm();
  }

  private ready(me: UserFromGetMe): void {
    this.opts.logger.info(`${this.opts.label}: polling as @${me.username}`);
  }

  private async run(): Promise<void> {
    const { client, logger, label } = this.opts;
    const signal = this.abort.signal;
    const grammy = grammySignal(signal);
    let failures = 0;
    let webhookDeleted = false;
    while (!this.stopped) {
      try {
        if (!this.me) this.ready((this.me = await client.api.getMe(grammy)));
        // A webhook, while set, keeps getUpdates from working.
        if (!webhookDeleted) webhookDeleted = await client.api.deleteWebhook({}, grammy);
        const updates = await client.api.getUpdates({ offset: this.offset, timeout: POLL_TIMEOUT_S, allowed_updates: ["message", "callback_query"] }, grammy);
        this.confirmed = this.offset;
        failures = 0;
        for (const update of updates) {
          this.offset = Math.max(this.offset, update.update_id + 1);
          try {
            this.opts.onUpdate(update, this.me);
          } catch (error) {
            logger.error(`${label}: update ${update.update_id} could not be handled: ${client.describe(error)}`);
          }
        }
      } catch (error) {
        if (this.stopped) return;
        if (isTokenRefused(error)) {
          logger.error(`${label}: the Bot API refused the token (${client.describe(error)}); the bot stopped polling: check ${this.opts.tokenPath}`);
          return;
        }
        failures++;
        const retryAfter = error instanceof GrammyError ? error.parameters.retry_after : undefined;
        const waitMs = retryAfter !== undefined ? retryAfter * 1000 : pollBackoffMs(failures);
        logger.warn(`${label}: polling failed (${client.describe(error)}); trying again in ${waitMs / 1000} s`);
        try {
          await wait(this.opts.timer, waitMs, signal);
        } catch {
          return;
        }
      }
    }
  }

  /** Tells Telegram the updates taken are done with, so they are not sent again. */
  private async confirm(): Promise<void> {
    const deadline = new AbortController();
    const cancel = this.opts.timer(CONFIRM_TIMEOUT_MS, () => deadline.abort());
    try {
      await this.opts.client.api.getUpdates({ offset: this.offset, limit: 1, timeout: 0 }, grammySignal(deadline.signal));
    } catch (error) {
      this.opts.logger.warn(
        `${this.opts.label}: could not confirm the last updates (${this.opts.client.describe(error)}); they may be answered again after a restart`,
      );
    } finally {
      cancel();
    }
  }
}
