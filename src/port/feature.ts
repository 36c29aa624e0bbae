import type { z } from "zod";
import type { AgentDefinition } from "../agents/agent.js";
import type { ConfigSections, OwnSections } from "../config/layout.js";
import type { Shape } from "../config/schema.js";
import type { Env } from "../config/load.js";
import type { Logger } from "../log.js";
import type { Timer } from "../signals.js";
import type { HistoryStore } from "../session/history.js";
import type { Delivery, SessionItem } from "../session/delivery.js";
import type { FeatureState } from "../session/feature-state.js";
import type { SessionScoped } from "../session/state.js";
import type { Redact } from "../tools/redact.js";
import type { AnyTool } from "../tools/registry.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Approvals } from "./approvals.js";
import type { Pairings } from "./pairings.js";
import type { Command } from "./command.js";
import type { EventBus } from "./events.js";
import type { PromptSection } from "./prompt.js";
import type { FeatureRoute } from "./route.js";

/**
 * The seam every feature plugs into: todo (both styles), subagents, plugin
 * modules, MCP servers and chat channels are all features, listed in
 * `features/index.ts` (an embedder's are added through the composition
 * root). The runtime names none of them: it calls each feature's `setup`
 * once and takes what it contributes (tools, slash commands, per-session
 * state, HTTP routes, its own event types by augmenting `RuntimeEvents`).
 *
 * A feature brings its own config: the sections it declares (`config`)
 * are mounted in the config's schema, its JSON Schema and its env
 * overrides, and `setup` gets them parsed. It gets only the host
 * capabilities it asks for (`needs`). Features are trusted code of the
 * gateway; tools get only their `ToolContext`.
 *
 * Write one with `defineFeature`, which types `setup`'s host and sections
 * from what the feature declares.
 */
export interface Feature<Api = unknown> {
  readonly name: string;
  /** Its config sections: `tools.<key>` for each of its tools, others by path. */
  readonly config?: ConfigSections;
  /**
   * AGENT.md frontmatter keys the feature reads, with their schemas. A bad
   * value is a frontmatter error like any other (the agent fails closed);
   * the value is then in `agent.settings[key]`.
   */
  readonly frontmatter?: Readonly<Record<string, z.ZodType>>;
  /** The host capabilities it uses; `setup` gets these and no other. */
  readonly needs?: readonly Capability[];
  /**
   * Work before the runtime is made (load modules, start servers), run by
   * the composition root's `prepare` (`bootstrap` sets the feature up as it
   * is). Returns the feature to set up in its place, with the tools it
   * brings (for name clashes) and what undoes its work when start-up fails.
   */
  preload?(context: PreloadContext): Promise<Preloaded>;
  setup(host: FeatureHost, config: OwnSections): FeatureParts<Api>;
}

/**
 * What a feature's `preload` gets: its sections, where the config lives,
 * and the tool names already taken. Preloading is trusted start-up code,
 * outside `needs`: it gets the whole environment, to hand on to what it
 * starts (an MCP server inherits a few variables of it).
 */
export interface PreloadContext {
  config: OwnSections;
  /** The config file's folder. */
  baseDir: string;
  /** The gateway's environment (after `.env` files), for what it starts. */
  env: Env;
  logger: Logger;
  /** Scrubs the config's secrets from what it logs or reports. */
  redact: Redact;
  /** Aborts when start-up is stopped (SIGTERM while servers start). */
  signal: AbortSignal | undefined;
  /** Tool names in use already, with where each comes from. */
  taken: ReadonlyMap<string, string>;
  /** Keys of `tools` that are no tool's section (a tool may not be named so). */
  reservedToolKeys: readonly string[];
  /** The time limit of one call of a tool in ms (tools.<name>.timeout_ms, else the tool's own), and the key that set it. */
  toolTimeoutMs(tool: Pick<AnyTool, "name" | "timeoutMs">): number;
  toolTimeoutSetting(tool: Pick<AnyTool, "name" | "timeoutSetting">): string;
}

export interface Preloaded {
  feature: Feature;
  /** The tools it brings, known now (later preloads check their names against them). */
  tools?: readonly AnyTool[];
  /** Undoes what preload started (stops its servers) when start-up fails after it. */
  abandon?(): Promise<void>;
}

export type { Delivery, SessionItem } from "../session/delivery.js";

/** The origin the gateway's own features give their tools. */
export const BUILT_IN_ORIGIN = "the built-in tools";
/** The origin of loose tools an embedding program (or a test) hands the runtime. */
export const EMBEDDER_ORIGIN = "the embedding program";

export interface FeatureParts<Api = unknown> {
  tools?: readonly AnyTool[];
  /** Where its tools come from, shown by `picoclaw agents` and in clash errors (default: `feature "<name>"`). */
  origin?: (toolName: string) => string;
  /** The form of one of its tools a given agent gets (the todo tool's style, the agents `delegate` may name), or undefined when that agent is not offered it at all. */
  toolFor?(tool: AnyTool, agent: AgentDefinition): AnyTool | undefined;
  commands?: readonly Command[];
  /**
   * Per-session state: dropped by `/clear` and when a sub-turn ends. Work a
   * feature runs for a session outside its turns (spawned subagents) is
   * stopped here on `clear`; the clear waits for the returned promise.
   */
  sessionState?: readonly SessionScoped[];
  routes?: readonly FeatureRoute[];
  /** Folders (absolute) every agent's file tools may read besides its workspace, read-only: the skill folders, whose SKILL.md the model reads when it needs it. */
  readPaths?: readonly string[];
  /** Sections it adds to every turn's system prompt, after the AGENT.md body (bounded, the same while what they show is). */
  prompt?: readonly PromptSection[];
  /** Warnings worth printing at start-up. */
  warnings?: readonly string[];
  /**
   * Name prefixes of the tools it brings later, once `connect` reached them
   * (an MCP server's `mcp_<server>_`): config sections, tool variables and
   * AGENT.md allowlists naming such a tool are not warned about at start-up.
   */
  laterTools?: readonly string[];
  /**
   * Reaches what its tools live on (the MCP feature starts its servers),
   * adding the tools as they arrive (`addTools`). Called once, by
   * `runtime.connect()`: the gateway begins it when it listens and never
   * waits for it; a one-turn command (`picoclaw agent`) waits for it before
   * its turn; commands that only describe the config never call it.
   * Resolves with warnings (a server that did not start) once each part is
   * up or has failed once; a throw is a warning naming the feature.
   */
  connect?(): Promise<readonly string[]> | readonly string[];
  /**
   * Starts taking input from outside the gateway (a chat channel begins
   * polling); called once, when the gateway listens (`runtime.start()`). A
   * throw is a start-up warning naming the feature, never a failed start-up.
   */
  start?(): Promise<void> | void;
  /** Stops taking input; called first when the runtime closes, before running turns are let finish. `close` follows. */
  stop?(): Promise<void> | void;
  /** Called once when the runtime closes (after every turn has ended). */
  close?(): Promise<void> | void;
  /** What the feature offers the program that embeds it, and tests (the todo plan store): `runtime.featureApi(feature)`. */
  api?: Api;
}

/** Where things are outside the workspaces (each absolute; undefined when unknown). */
export interface Locations {
  /** PicoClaw's home (`$PICOCLAW_HOME`, else `~/.picoclaw`): its `skills/` are every agent's. */
  readonly home?: string;
  /** The built-in skills: `$PICOCLAW_BUILTIN_SKILLS`, else the package's own `skills/`. */
  readonly builtinSkills?: string;
}

export interface Clock {
  now(): number;
}

/** One message from a chat user, as a channel hands it to the runtime (the runtime's `handleMessage`). */
export interface ChatInput {
  agentId: string;
  /** The channel part of the session key (`telegram`). */
  channel: string;
  /** The chat part of the session key (see `CHAT_ID` in session/key.ts). */
  chatId: string;
  text: string;
  signal?: AbortSignal;
}

/** What a message led to: the reply, and everything the user sees, in order. */
export interface ChatOutcome {
  agentId: string;
  sessionKey: string;
  reply: string;
  delivered: Delivery[];
}

/** What the runtime offers a feature; each feature gets the capabilities it names in `needs`. */
export interface FeatureHost {
  /** `agents.default`: the agent a message goes to when it names none. */
  readonly defaultAgentId: string;
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  readonly events: EventBus;
  /** The histories, as far as a feature may touch them (a kept child history: read, trimmed, forgotten). */
  readonly history: FeatureHistory;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Starts a one-shot timer (time limits); tests inject one that they run out themselves. */
  readonly timer: Timer;
  readonly ids: () => string;
  /** The agent with this id; a RequestError `agent_not_found` otherwise. */
  agent(agentId: string): AgentDefinition;
  /** Whether the agent may use the tool (enabled in config and allowed by its AGENT.md). */
  hasTool(agentId: string, tool: string): boolean;
  /**
   * A system note the agent's next turn in the session gets, once, just
   * before its new message (it is not kept in the history, nor shown to the
   * user). One note waits per `topic` (default `"note"`): a later one of the
   * topic replaces it, and `undefined` forgets it.
   */
  noteForNextTurn(agentId: string, sessionKey: string, note: string | undefined, topic?: string): void;
  /** Runs a turn of `agent` on `sessionKey`, queued behind the session's turns; nothing it delivers reaches the user (a sub-turn). */
  runTurn(agent: AgentDefinition, sessionKey: string, text: string, signal: AbortSignal): Promise<string>;
  /**
   * Runs a turn on a user's session outside any request, queued behind its
   * turns and stopped by `/stop` and shutdown. What it delivers reaches the
   * session's event streams, or the next chat response. Rejects with an
   * AbortedError while the runtime shuts down, and when the session is
   * cleared before it has run (a clear drops what was asked for before it).
   */
  runBackgroundTurn(agent: AgentDefinition, sessionKey: string, text: string): Promise<string>;
  /** Delivers to a session's user outside any request (an event stream, else kept for the next chat response). */
  deliverLater(agentId: string, sessionKey: string, delivery: Delivery): void;
  /** A notice for the session's open streams (`event` with JSON `data`): its event streams, and the message being answered with its events streamed; never kept. */
  notify(sessionKey: string, event: string, data: Readonly<Record<string, unknown>>): void;
  /**
   * The environment for processes a feature starts for the model (exec's
   * commands): the gateway's, without `PICOCLAW_*`, variables named like
   * secrets, or any value holding a configured secret.
   */
  readonly processEnv: Readonly<Record<string, string>>;
  /** Whether the session's history is kept beyond the process (the store's files, a database): a restart finds it again. */
  isDurableSession(sessionKey: string): boolean;
  /** Whether a session is a chat channel's (a channel_list entry's chat, or a subagent under one): input from people outside the gateway's operator. */
  isChatSession(sessionKey: string): boolean;
  /** The agent's workspace: the confined file system its file tools go through (the agent's `workspace`, with the config's policy). */
  workspace(agentId: string): Promise<Workspace>;
  /** Tool calls and ask_user questions waiting for a person in a session, and how a person answers (a chat channel's buttons, the ask_user tool). */
  readonly approvals: Approvals;
  /** Chat users let in by the owner, and the codes that wait for the owner (a channel with `dm_policy: "pairing"`). */
  readonly pairings: Pairings;
  /** Folders beyond the workspaces the gateway knows of: PicoClaw's home, the skills shipped with the package. */
  readonly locations: Locations;
  /** The feature's own durable state (its namespace of the store's feature state): cron jobs, approvals. */
  readonly state: FeatureState;
  /** The session's stop switch (`/stop`) joined with shutdown, held until released. */
  holdStop(sessionKey: string): { signal: AbortSignal; release: () => void };
  /** Background work the runtime waits for on shutdown. */
  track(work: Promise<unknown>): void;
  /** Drops every per-session state of a finished sub-turn's key. */
  releaseSession(sessionKey: string): Promise<void>;
  /** Tools that arrive after start-up (an MCP server that came up late); a name already taken is skipped with a warning. */
  addTools(tools: readonly AnyTool[], origin: string): void;
  /**
   * One message from a chat user (a channel's): a slash command or a turn of
   * the agent, exactly as an HTTP chat request runs it. Rejects with a
   * RequestError for an unknown agent or a bad chat id, an AbortedError when
   * stopped (`/stop`, shutdown), a ModelError when the model failed.
   */
  handleMessage(input: ChatInput): Promise<ChatOutcome>;
  /**
   * Sends what reaches the session to `subscriber` as it happens (deliveries
   * of its turns, background ones, notices), first what was kept while
   * nobody listened. Returns the function that stops it. The subscriber is
   * called inside the turn that delivers: it must return at once and never throw.
   */
  subscribe(sessionKey: string, subscriber: (item: SessionItem) => void): () => void;
}

/** What a feature may do with the history store: read and change a session's history, never the store itself (closing it lets go of its folder). */
export type FeatureHistory = Pick<HistoryStore, "get" | "page" | "append" | "replace" | "clear">;

/** A host capability a feature may ask for. */
export type Capability = keyof FeatureHost;

/** A feature's sections as `setup` gets them, typed by what it declared. */
export interface TypedSections<T extends Shape, S extends Shape> {
  readonly tools: { readonly [K in keyof T]: z.output<T[K]> };
  readonly sections: { readonly [K in keyof S]: z.output<S[K]> };
}

/**
 * A feature, typed: `setup` gets a host with exactly the capabilities in
 * `needs`, and its sections parsed with the types of their schemas.
 */
/** No sections: the default of a feature that declares none. */
type NoSections = Record<never, z.ZodType>;

export function defineFeature<const N extends readonly Capability[], T extends Shape = NoSections, S extends Shape = NoSections, Api = undefined>(feature: {
  name: string;
  needs: N;
  config?: {
    tools?: T;
    sections?: S;
    secrets?(own: TypedSections<T, S>): Iterable<string>;
    fromPicoclaw?: Readonly<Record<string, (raw: unknown, notes: string[]) => unknown>>;
  };
  frontmatter?: Readonly<Record<string, z.ZodType>>;
  preload?(context: PreloadContext): Promise<Preloaded>;
  setup(host: Pick<FeatureHost, N[number]>, config: TypedSections<T, S>): FeatureParts<Api>;
}): Feature<Api> {
  return feature as unknown as Feature<Api>;
}
