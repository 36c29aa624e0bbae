import { messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";

/** What the listener uses of a connection (pg's Client). */
export interface ListenClient {
  query(text: string): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string | undefined }) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  removeAllListeners(): unknown;
  end(): Promise<void>;
}

/** The wait before the next try after the connection was lost: doubling from the first to the last, then the last. */
export const LISTEN_RETRY = { firstMs: 100, lastMs: 5_000 } as const;

export interface ListenerOptions {
  /** The channels LISTENed to (constants of this store: they go into the statement as they are). */
  channels: readonly string[];
  /** Opens a connection of its own (PgDatabase.dedicatedClient). */
  connect: () => Promise<ListenClient>;
  onNotification: (channel: string, payload: string) => void;
  /** Called once the channels are listened to: `again` when it is after a lost connection (what was sent meanwhile is read then). */
  onConnected?: (again: boolean) => void;
  /** Called when the connection is lost (what is NOTIFYed until it is back does not reach this gateway). */
  onLost?: () => void;
  logger: Logger;
  timer: Timer;
  retry?: { firstMs: number; lastMs: number };
}

/**
 * The gateway's one LISTEN connection to the session database: what the
 * other gateways NOTIFY (a delivery for a session, a /stop) reaches this
 * one through it. It is a connection of its own, kept open for as long as
 * the gateway runs. When it is lost (the database restarted, a failover),
 * the log says so once and it is opened again, waiting longer after each
 * failed try (LISTEN_RETRY); meanwhile the gateway goes on (what it
 * publishes still reaches its own streams), and once it is back
 * `onConnected(true)` lets the outbox read what it missed.
 */
export class PgListener {
  private client: ListenClient | undefined;
  private closed = false;
  private tries = 0;
  private lostAt: string | undefined;
  private cancelRetry: () => void = () => {};

  constructor(private readonly opts: ListenerOptions) {}

  /** Connects and listens; rejects when the first connection cannot be made (start-up stops then). */
  async start(): Promise<void> {
    await this.connect(false);
  }

  /** Whether the channels are listened to now. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cancelRetry();
    const client = this.client;
    this.client = undefined;
    if (client) await this.dispose(client);
  }

  private async connect(again: boolean): Promise<void> {
    const client = await this.opts.connect();
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client));
    client.on("notification", (message) => this.opts.onNotification(message.channel, message.payload ?? ""));
    try {
      for (const channel of this.opts.channels) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      await this.dispose(client);
      throw error;
    }
    if (this.closed) {
      await this.dispose(client);
      return;
    }
    this.client = client;
    this.tries = 0;
    if (this.lostAt !== undefined)
      this.opts.logger.info("the session database's notification connection is back: deliveries and stops from other gateways reach this one again");
    this.lostAt = undefined;
    this.opts.onConnected?.(again);
  }

  private lost(client: ListenClient, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    void this.dispose(client);
    if (this.closed) return;
    this.opts.onLost?.();
    this.lostAt = error ? messageOf(error) : "the server ended it";
    this.opts.logger.warn(
      `the session database's notification connection was lost (${this.lostAt}); trying again: until it is back, deliveries and stops from other gateways do not reach this one`,
    );
    this.retry();
  }

  private retry(): void {
    const { firstMs, lastMs } = this.opts.retry ?? LISTEN_RETRY;
    const ms = Math.min(lastMs, firstMs * 2 ** Math.min(this.tries, 20));
    this.tries++;
    this.cancelRetry = this.opts.timer(ms, () => {
      this.connect(true).catch(() => {
        // Said once when it was lost; each failed try waits longer for the next.
        if (!this.closed) this.retry();
      });
    });
  }

  private async dispose(client: ListenClient): Promise<void> {
    client.removeAllListeners();
    // Whatever the dying connection still says is of no interest now.
    client.on("error", () => {});
    await client.end().catch(() => {});
  }
}
