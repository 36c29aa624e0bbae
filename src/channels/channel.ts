import type { FeatureHost } from "../port/feature.js";

/**
 * Chat channels: features that carry messages between a chat app and the
 * runtime, beside the HTTP gateway. A channel is a `Feature` whose parts
 * have `start` (begin taking messages: called when the gateway listens),
 * `stop` (take no more: called first on shutdown) and `close` (after the
 * running turns ended: send what is left, let go of connections). The
 * runtime names no channel; the composition root makes one per
 * `channel_list` entry.
 *
 * Inside, a channel is two halves: the chat app's side (receiving its
 * messages, a `ChatTransport` to send) and a `ChatRelay` (relay.ts), the
 * same for every app, which turns each message into `handleMessage` and
 * hands what the session delivers back to the transport.
 */

/** What a channel needs of the runtime: messages in, what sessions deliver out (and the model's text as it streams), pairings, a log and a timer. */
export const CHANNEL_CAPABILITIES = ["handleMessage", "subscribe", "events", "pairings", "logger", "timer"] as const;
export type ChannelHost = Pick<FeatureHost, (typeof CHANNEL_CAPABILITIES)[number]>;

/** The chat app's side of sending. */
export interface ChatTransport {
  /**
   * Sends a text to a chat the way the app wants it (split to its size,
   * formatted); resolves once sent or given up: it never rejects, and logs
   * its own failures (never with a secret). `signal` aborts it on shutdown.
   * `from` says whose it is, for a delivery: `agent` (an answer), `command`
   * (a slash command's reply), a tool's name (its output), `heartbeat`;
   * undefined for the channel's own texts (a greeting, "busy").
   */
  send(chatId: string, text: string, signal: AbortSignal, from?: string): Promise<void>;
  /** Shows the chat that the agent is working (Telegram's "typing"); best effort, never rejects. */
  working?(chatId: string, signal: AbortSignal): Promise<void>;
  /** Shows a tool call that waits for a person's decision, with a way to answer (Telegram: inline buttons); never rejects. */
  askApproval?(chatId: string, request: ApprovalRequestNotice, signal: AbortSignal): Promise<void>;
  /** Shows the decision on a request it showed (Telegram: the message is edited, its buttons gone); never rejects. */
  approvalResolved?(chatId: string, resolved: ApprovalResolvedNotice, signal: AbortSignal): Promise<void>;
  /** Shows an ask_user question with its options (Telegram: a reply keyboard); the user's next message answers it. Never rejects. */
  askQuestion?(chatId: string, question: QuestionNotice, signal: AbortSignal): Promise<void>;
  /** A reply shown as the model writes it (Telegram: one message, edited); used when the channel streams. */
  draft?(chatId: string, signal: AbortSignal): ReplyDraft;
}

/**
 * One reply being written, in a chat (README, "Streaming"). The relay
 * gives it the text so far as it grows, lets it send when its turn in the
 * chat's queue comes (`open`), and ends it with the whole text (`finish`).
 * None of them throws or rejects; the draft logs its own failures.
 */
export interface ReplyDraft {
  /** The reply so far (the whole of it, each time). */
  update(text: string): void;
  /** The draft may send now; resolves once its first message is out (or it has nothing to show yet). */
  open(): Promise<void>;
  /** The whole reply: shown in full (formatted, in more messages when it is long); resolves once sent or given up. */
  finish(text: string): Promise<void>;
}

/** `approval.requested` as a channel shows it. */
export interface ApprovalRequestNotice {
  id: string;
  tool: string;
  arguments: unknown;
  expiresAt: string;
}

/** `approval.resolved` as a channel shows it. */
export interface ApprovalResolvedNotice {
  id: string;
  decision: string;
  by: string;
}

/** `question.asked` as a channel shows it. */
export interface QuestionNotice {
  id: string;
  question: string;
  options: readonly string[];
}

/** How a chat user's message enters the relay. */
export interface UserMessage {
  /** The chat part of the session key: a valid `CHAT_ID` (session/key.ts). */
  chatId: string;
  text: string;
}

/** What a channel runs once it starts: its chat app's bot. */
export interface ChannelBot {
  start(): Promise<void>;
  stop(): Promise<void> | void;
  close(): Promise<void> | void;
}

/**
 * A channel's `start`, `stop` and `close` around its bot: `load` imports the
 * app's library only when the channel starts and gives what makes the bot.
 * A stop that comes while the module loads means the bot is never made.
 */
export function lazyBot(load: () => Promise<() => ChannelBot>): { start(): Promise<void>; stop(): Promise<void>; close(): Promise<void> } {
  let bot: ChannelBot | undefined;
  let stopped = false;
  return {
    start: async () => {
      const make = await load();
      if (stopped) return;
      bot = make();
      await bot.start();
    },
    stop: async () => {
      stopped = true;
      await bot?.stop();
    },
    close: async () => {
      stopped = true;
      await bot?.close();
    },
  };
}

/** The start-up warning of a channel entry that lets nobody in (`allow_from` empty, and no pairing). */
export function nobodyAllowedWarning(path: string, label: string, app: string): string {
  return `${path}.allow_from is empty: ${label} answers nobody; list your ${app} user id there, or set dm_policy "pairing" (README, "Channels")`;
}
