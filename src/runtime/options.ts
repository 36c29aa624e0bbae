import type { AgentDefinition } from "../agents/agent.js";
import type { ToolSwitch } from "../config/env.js";
import type { Config } from "../config/schema.js";
import type { Clock, Delivery, Feature } from "../feature/feature.js";
import type { Logger } from "../log.js";
import type { ChatMessage } from "../models/message.js";
import type { ModelProvider } from "../models/provider.js";
import type { HistoryStore } from "../session/history.js";
import type { Timer } from "../signals.js";
import type { Redact } from "../tools/redact.js";
import type { AnyTool } from "../tools/registry.js";
import type { ImageInput } from "./images.js";
import type { MessageObserver } from "./message-stream.js";
import type { TokenUsage } from "./usage.js";

/** What a runtime is made of, what a message is and what it gets back. */

/** Where providers come from (the model catalog, or a fake in tests). */
export interface ModelSource {
  get(modelName: string): ModelProvider;
}

export interface RuntimeOptions {
  config: Config;
  agents: ReadonlyMap<string, AgentDefinition>;
  models: ModelSource;
  /** What plugs into the runtime (todo, subagents, plugins, MCP...), set up in this order. */
  features?: readonly Feature[];
  /** Loose tools of the embedding program (tests, embedders), besides the features' own. */
  tools?: Iterable<AnyTool>;
  history?: HistoryStore;
  /** `PICOCLAW_TOOLS_<NAME>_ENABLED` for tools that are not built in. */
  toolSwitches?: readonly ToolSwitch[];
  clock?: Clock;
  /** Times subagents' timeout_ms (default: real timers; tests decide when it runs out). */
  timer?: Timer;
  /** Times agents.defaults.turn_timeout_ms (default: real timers). */
  turnTimer?: Timer;
  ids?: () => string;
  logger?: Logger;
  /** Scrubs the configured secrets (LoadedConfig.secrets) from every tool result before it reaches the model or the user. */
  redact?: Redact;
}

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
  /** The reply was cut short by a limit (the model's max_tokens, or max_tool_iterations), and says so. */
  truncated?: true;
}

/** The reply to a message that `/stop` ended. */
export const STOPPED_REPLY = "Stopped by /stop before it was answered; this message is not kept in the history.";

/** Entries the runtime holds, by kind. */
export interface RuntimeStats {
  /** Sessions with a history in memory. */
  sessions: number;
  /** Bytes of history in memory (UTF-8 bytes of the messages' JSON). */
  historyBytes: number;
  /** (agent, session) entries of tools' `ctx.state`. */
  toolStates: number;
  notes: number;
  locks: number;
  stopSwitches: number;
  runningTurns: number;
  inflight: number;
  /** Messages whose events a caller follows now (a streamed answer). */
  watchedMessages: number;
}

/** A session as `GET /v1/sessions` lists it. */
export interface SessionSummary {
  key: string;
  agentId: string;
  /** Messages its history holds. */
  messages: number;
  /** When its history last changed (ms since the epoch). */
  updatedAt: number;
}

/** A tool as `picoclaw agents` lists it. */
export interface ToolOverview {
  name: string;
  origin: string;
  enabled: boolean;
}
