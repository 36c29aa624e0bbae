import type { AgentDefinition } from "../agents/agent.js";
import type { ToolSwitch, ToolSwitchSources } from "../config/env.js";
import type { Env } from "../config/load.js";
import type { Config } from "../config/schema.js";
import type { Clock, Feature, Locations } from "../port/feature.js";
import type { Logger } from "../log.js";
import type { FeatureStateStore } from "../session/feature-state.js";
import type { StoreConnection } from "../session/store.js";
import type { HistoryStore } from "../session/history.js";
import type { SessionOutbox } from "../session/outbox.js";
import type { StopBoard } from "../session/stop-switches.js";
import type { TurnOrder } from "../session/turn-order.js";
import type { Timer } from "../signals.js";
import type { Approval } from "../tools/approval.js";
import type { Redact } from "../tools/redact.js";
import type { AnyTool } from "../tools/registry.js";
import type { ModelSource } from "./turn/turn-runner.js";

export type { ModelSource } from "./turn/turn-runner.js";
export type { ResponseFormat, Sampling, ToolChoice } from "../models/provider.js";
export type { ChatMessage, ToolCall, ToolSpec } from "../models/message.js";
export { type ConversationInput, type MessageInput, type MessageOutcome, STOPPED_REPLY } from "./messages/message.js";

/** What a runtime is made of, and what it reports. */

export interface RuntimeOptions {
  config: Config;
  agents: ReadonlyMap<string, AgentDefinition>;
  models: ModelSource;
  /** What plugs into the runtime (todo, subagents, plugins, MCP...), set up in this order. */
  features?: readonly Feature[];
  /** Loose tools of the embedding program (tests, embedders), besides the features' own. */
  tools?: Iterable<AnyTool>;
  /** The ports a store implements (session/store.ts); what is not given is the in-process one. */
  history?: HistoryStore;
  order?: TurnOrder;
  stops?: StopBoard;
  outbox?: SessionOutbox;
  state?: FeatureStateStore;
  /** The store's connection, when it is reached over one (session/store.ts). */
  connection?: StoreConnection;
  /** Keys of `tools` that are no tool's section (the layout's: `max_result_bytes`, `plugins`, `mcp`...); default: those of `features`. */
  reservedToolKeys?: readonly string[];
  /** `PICOCLAW_TOOLS_<NAME>_ENABLED` for tools that are not built in. */
  toolSwitches?: readonly ToolSwitch[];
  /** Where each `tools.<name>.enabled` came from (LoadedConfig.toolSwitchSources): the tool library shows it and refuses to change what a variable sets. */
  toolSwitchSources?: ToolSwitchSources;
  clock?: Clock;
  /** Times subagents' timeout_ms (default: real timers; tests decide when it runs out). */
  timer?: Timer;
  /** Times agents.defaults.turn_timeout_ms (default: real timers). */
  turnTimer?: Timer;
  ids?: () => string;
  /** New pairing codes (8 of PAIRING_ALPHABET; default: random): tests give their own. */
  pairingCodes?: () => string;
  logger?: Logger;
  /** The gateway's environment (after `.env` files): what processes features start inherit, scrubbed (see processEnvironment). Default: none. */
  env?: Env;
  /** Scrubs the configured secrets (LoadedConfig.secrets) from every tool result before it reaches the model or the user. */
  redact?: Redact;
  /** Why nobody can answer an approval request or a question here (`picoclaw agent -m`): every call under "ask" is then denied with it. */
  nobodyAnswers?: string;
  /** Channels whose clients cannot show an approval request or a question (the OpenAI-compatible route's): there, "ask" is "deny". */
  channelsWithoutAsking?: readonly string[];
  /** PicoClaw's home and the built-in skills' folder (features read skills there). */
  locations?: Locations;
}

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
  /** Messages waiting for their session's turn before them. */
  queuedTurns: number;
  /** Bytes of input (texts, images, tool results) those messages hold. */
  queuedBytes: number;
  inflight: number;
  /** Messages whose events a caller follows now (a streamed answer). */
  watchedMessages: number;
  /** Tool calls and ask_user questions waiting for a person. */
  waitingForPeople: number;
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

/** A tool as the tool library (`GET /v1/tools`) shows it. */
export interface ToolEntry extends ToolOverview {
  /** What decides `enabled`: the tool's own default, the config file, or an environment variable. */
  source: "default" | "config" | "env";
  /** The variable, when `source` is `env` (the switch is then locked). */
  envVar?: string;
  /** The agents that are offered it now, sorted. */
  agents: string[];
  /** Its approval policy (tools.<name>.approval, else the tool's own). */
  approval: Approval;
  /** Agents whose AGENT.md `approval:` gives it another policy. */
  agentApprovals: Record<string, Approval>;
}
