import { type SessionInfo, WebSocketManager, WebSocketShardEvents } from "@discordjs/ws";
import type { GatewayDispatchPayload, GatewayReadyDispatchData } from "@discordjs/core";
import { wait } from "../../channels/wait.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import { type DiscordApi, isTokenRefused } from "./api.js";

/**
 * The bot's connection to Discord's gateway (@discordjs/ws): one shard, JSON
 * without compression, at the URL Discord answers to `GET /gateway/bot`
 * (so a fake REST API in tests points the bot at a fake gateway too).
 * The library keeps the connection: it heartbeats, and after a dropped
 * connection it resumes the session (or identifies anew) on its own. Its
 * first connection is made here, in the background: when it fails before
 * the gateway answered (Discord out of reach), it is tried again after
 * 1 s, doubling to CONNECT_BACKOFF_MAX_MS. Discord refusing the token or
 * the intents ends the connection for good, loudly. `close` ends the
 * connection (close code 1000) and makes no new one.
 */

export const CONNECT_BACKOFF_MAX_MS = 60_000;
export const connectBackoffMs = (failures: number): number => Math.min(CONNECT_BACKOFF_MAX_MS, 1000 * 2 ** (failures - 1));

/** What the library's fatal errors mean for the operator. */
const FATAL: Readonly<Record<string, string>> = {
  "Authentication failed": "Discord refused the token",
  "Used disallowed intents":
    "Discord refused the intents: turn on Message Content Intent (Developer Portal → the application → Bot → Privileged Gateway Intents), or set group_trigger.mention_only to true",
  "Used invalid intents": "Discord refused the intents",
  "Sharding is required": "Discord asks for sharding, which this channel does not do (the bot is in too many servers)",
};

/** Close codes after which the library does not connect again (its error event says why). */
const FINAL_CLOSE_CODES: ReadonlySet<number> = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

export interface GatewayOptions {
  token: string;
  client: DiscordApi;
  intents: number;
  timer: Timer;
  logger: Logger;
  label: string;
  /** Where the token is configured, for the message when Discord refuses it. */
  tokenPath: string;
  onReady(data: GatewayReadyDispatchData): void;
  onDispatch(payload: GatewayDispatchPayload): void;
}

export class DiscordGateway {
  private readonly manager: WebSocketManager;
  /** The shard's session (to resume it), this bot's own: the library's default store is shared by the process. */
  private readonly sessions = new Map<number, SessionInfo>();
  private readonly abort = new AbortController();
  private closing = false;
  /** Whether a dropped connection has been logged since the last ready one (the library tries again every half second). */
  private dropped = false;
  private connecting: Promise<void> | undefined;

  constructor(private readonly opts: GatewayOptions) {
    const { logger, label } = opts;
    this.manager = new WebSocketManager({
      token: opts.token,
      intents: opts.intents,
      rest: opts.client.rest,
      shardCount: 1,
      retrieveSessionInfo: (shardId) => this.sessions.get(shardId) ?? null,
      updateSessionInfo: (shardId, info) => {
        if (info) this.sessions.set(shardId, info);
        else this.sessions.delete(shardId);
      },
    });
    this.manager.on(WebSocketShardEvents.Ready, (data) => {
      this.dropped = false;
      logger.info(`${label}: connected to the gateway as @${data.user.username}`);
      opts.onReady(data);
    });
    this.manager.on(WebSocketShardEvents.Resumed, () => {
      this.dropped = false;
      logger.info(`${label}: resumed the gateway session`);
    });
    this.manager.on(WebSocketShardEvents.Dispatch, (payload) => {
      if (!this.closing) opts.onDispatch(payload);
    });
    this.manager.on(WebSocketShardEvents.Closed, (code) => {
      if (this.closing || this.dropped || FINAL_CLOSE_CODES.has(code)) return;
      this.dropped = true;
      logger.warn(`${label}: the gateway connection closed (code ${code}); connecting again`);
    });
    this.manager.on(WebSocketShardEvents.Error, (error) => {
      const fatal = FATAL[error.message];
      if (fatal) logger.error(`${label}: ${fatal}; the bot is disconnected${error.message === "Authentication failed" ? `: check ${opts.tokenPath}` : ""}`);
      else logger.warn(`${label}: gateway error: ${opts.client.describe(error)}`);
    });
    // A socket's errors come with a close, which is logged.
    this.manager.on(WebSocketShardEvents.SocketError, () => {});
  }

  /** Connects in the background; resolves at once. */
  start(): void {
    this.connecting = this.connect();
  }

  /** Ends the connection and makes no new one. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.abort.abort();
    await this.connecting;
    try {
      await this.manager.destroy({ code: 1000, reason: "the gateway is shutting down" });
    } catch (error) {
      this.opts.logger.warn(`${this.opts.label}: closing the gateway connection failed: ${this.opts.client.describe(error)}`);
    }
  }

  private async connect(): Promise<void> {
    const { client, logger, label, timer } = this.opts;
    for (let failures = 1; !this.closing; failures++) {
      try {
        // Resolves once the first connection is ready (the library keeps trying until then), or fails before it is made.
        await Promise.race([this.manager.connect(), closed(this.abort.signal)]);
        return;
      } catch (error) {
        if (this.closing) return;
        if (isTokenRefused(error)) {
          logger.error(`${label}: Discord refused the token (${client.describe(error)}); the bot is disconnected: check ${this.opts.tokenPath}`);
          return;
        }
        const waitMs = connectBackoffMs(failures);
        logger.warn(`${label}: cannot connect to the gateway (${client.describe(error)}); trying again in ${waitMs / 1000} s`);
        try {
          await wait(timer, waitMs, this.abort.signal);
        } catch {
          return;
        }
      }
    }
  }
}

/** Resolves when `signal` aborts. */
function closed(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}
