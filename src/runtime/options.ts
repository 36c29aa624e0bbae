import type { AgentDefinition } from "../agents/agent.js";
import type { ToolSwitch } from "../config/env.js";
import type { Config } from "../config/schema.js";
import type { Clock, Delivery, Feature } from "../feature/feature.js";
import type { Logger } from "../log.js";
import type { ModelProvider } from "../models/provider.js";
import type { HistoryStore } from "../session/history.js";
import type { Timer } from "../signals.js";
import type { Redact } from "../tools/redact.js";
import type { AnyTool } from "../tools/registry.js";
import type { ImageInput } from "./images.js";

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
