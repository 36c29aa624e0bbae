import type { Delivery } from "../../port/feature.js";
import type { ChatMessage, ToolCall, ToolSpec } from "../../models/message.js";
import type { Sampling } from "../../models/provider.js";
import type { ImageInput } from "../turn/images.js";
import type { TokenUsage } from "../turn/usage.js";
import type { MessageObserver } from "../streams/message-stream.js";

/** What a message is and what it gets back. */

export interface MessageInput {
  agentId: string;
  channel: string;
  chatId: string;
  text: string;
  /** Images sent with the text (checked: count, kind, size; refused for an agent whose model has no vision). */
  images?: readonly ImageInput[];
  signal?: AbortSignal;
  /** Told the message's events as they happen (see `MessageEvent`), until it settles. */
  onEvent?: MessageObserver;
  /** What the client asks of the model's answers (the OpenAI-compatible route): temperature, structure... */
  sampling?: Sampling;
  /** The client's own tools, offered beside the agent's; a call of one ends the message with `clientCalls`. */
  clientTools?: readonly ToolSpec[];
  /** The client's results of the calls the last message ended with: the turn goes on from them (`text` is then unused). */
  toolResults?: readonly { toolCallId: string; content: string }[];
  /** Told `true` when the message starts waiting for its session's turn before it, `false` when it stops (it runs, or it left the queue). */
  onQueued?: (waiting: boolean) => void;
}

/**
 * One message of a conversation the client keeps itself (a stateless
 * OpenAI-style request): `history` is the conversation before it, `system`
 * what the client adds to the agent's own prompt (after it). It runs under a
 * session key of its own, made for it, whose history and per-session state
 * are released when it ends.
 */
export interface ConversationInput {
  agentId: string;
  /** The channel part of the key it runs under (`openai`). */
  channel: string;
  /** User and assistant messages before the new one, oldest first. */
  history: readonly ChatMessage[];
  system?: readonly string[];
  text: string;
  /** Images sent with the new message (checked as `MessageInput.images` are). */
  images?: readonly ImageInput[];
  signal?: AbortSignal;
  onEvent?: MessageObserver;
  sampling?: Sampling;
  clientTools?: readonly ToolSpec[];
  toolResults?: readonly { toolCallId: string; content: string }[];
}

export interface MessageOutcome {
  agentId: string;
  sessionKey: string;
  reply: string;
  delivered: Delivery[];
  /**
   * Deliveries kept for the session while nobody watched (a background
   * turn's answer), handed out with this answer, once. Empty after `/clear`,
   * which drops them.
   */
  earlier: Delivery[];
  /** `/stop` ended this message before it was answered: `reply` says so, and nothing of it was kept. */
  stopped?: true;
  /** Tokens of the turn's own model calls, summed, when the provider reported any. */
  usage?: TokenUsage;
  /** The message answered an `ask_user` question waiting in the session: it ran no turn of its own (`reply` is empty). */
  answered?: true;
  /** Calls of the client's tools the turn ended with (finish_reason "tool_calls"): the client runs them. */
  clientCalls?: ToolCall[];
  /** The reply was cut short by a limit (the model's max_tokens, or max_tool_iterations), and says so. */
  truncated?: true;
}

/** The reply to a message that `/stop` ended. */
export const STOPPED_REPLY = "Stopped by /stop before it was answered; this message is not kept in the history.";
