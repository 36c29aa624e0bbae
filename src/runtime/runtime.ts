import { nanoid } from "nanoid";
import type { AgentDefinition } from "../agents/agent.js";
import { type AgentSummary, agentSummaries, agentWarnings } from "../agents/overview.js";
import { ToolPolicy } from "../agents/policy.js";
import type { Config } from "../config/schema.js";
import { AbortedError, RequestError, messageOf } from "../errors.js";
import { type Logger, silentLogger } from "../log.js";
import { type Timer, joinSignals } from "../signals.js";
import type { ChatMessage } from "../models/message.js";
import type { ModelProvider } from "../models/provider.js";
import type { ToolSwitch } from "../config/env.js";
import { type AnyTool, ToolRegistry, ToolStates } from "../tools/registry.js";
import { createSubagentTools } from "../tools/subagent/tools.js";
import { todoCommand } from "../tools/todo/command.js";
import { createPhasesTool } from "../tools/todo/phases-tool.js";
import { type SharedPlanStore, type TodoStyle, createPlanStore, listView, phasesView } from "../tools/todo/plans.js";
import { createTodoTool } from "../tools/todo/tool.js";
import { type Command, CommandRegistry, clearCommand, helpCommand, stopCommand, subagentsCommand } from "./commands.js";
import { EventBus } from "./events.js";
import { type HistoryStore, MemoryHistoryStore } from "./history.js";
import { KeyedLocks } from "./locks.js";
import { Outbox } from "./outbox.js";
import { SessionLifecycle, SessionState } from "./session-state.js";
import { CHAT_ID, agentOfKey, isSubagentKey, isWithin, parseSessionKey, rootKey, sessionKeyFor } from "./session-key.js";
import { StopSwitches } from "./stop-switches.js";
import { answerInBackground } from "./background.js";
import { type ChildResult, Subturns } from "./subturns.js";
import { type Delivery, runTurn } from "./turn.js";

export interface Clock {
  now(): number;
}

/** Where providers come from (the model catalog, or a fake in tests). */
export interface ModelSource {
  get(modelName: string): ModelProvider;
}

export interface RuntimeOptions {
  config: Config;
  agents: ReadonlyMap<string, AgentDefinition>;
  models: ModelSource;
  /** Tools besides the built-in ones (plugins, tests). */
  tools?: Iterable<AnyTool>;
  history?: HistoryStore;
  /** `PICOCLAW_TOOLS_<NAME>_ENABLED` for tools that are not built in. */
  toolSwitches?: readonly ToolSwitch[];
  clock?: Clock;
  /** Times subagents' timeout_ms (default: real timers; tests decide when it runs out). */
  timer?: Timer;
  ids?: () => string;
  logger?: Logger;
}

export interface MessageInput {
  agentId: string;
  channel: string;
  chatId: string;
  text: string;
  signal?: AbortSignal;
}

export interface MessageOutcome {
  agentId: string;
  sessionKey: string;
  reply: string;
  delivered: Delivery[];
}


/**
 * The provider-free core: agents, tools, models, sessions, subagents. The
 * gateway and the CLI both drive it through `handleMessage`.
 */
export class Runtime {
  readonly config: Config;
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  readonly events: EventBus;
  readonly lifecycle = new SessionLifecycle();
  readonly commands = new CommandRegistry();
  readonly tools: ToolRegistry;
  readonly policy: ToolPolicy;
  readonly history: HistoryStore;
  readonly clock: Clock;
  readonly ids: () => string;
  readonly logger: Logger;
  /** The todo plans of every agent and session, both styles (one store, shared). */
  readonly todos: SharedPlanStore;
  /** What reaches users outside a request: background deliveries and subagent notices. */
  readonly outbox: Outbox;
  readonly subturns: Subturns;
  /** Per-session state of plugin tools (`ctx.state`). */
  readonly toolStates: ToolStates;

  private readonly models: ModelSource;
  private readonly locks = new KeyedLocks();
  private readonly stops = new StopSwitches();
  private readonly shutdown = new AbortController();
  private readonly inflight = new Set<Promise<unknown>>();
  /** Notes for an agent's next turn in a session (the user changed the plan), given once. */
  private readonly notes = new SessionState<string>();
  private closing = false;
  private readonly closers: (() => Promise<void> | void)[] = [];

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.agents = opts.agents;
    this.models = opts.models;
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.ids = opts.ids ?? (() => nanoid(12));
    this.logger = opts.logger ?? silentLogger;
    this.events = new EventBus((error, event) => this.logger.error(`a listener of ${event} failed: ${messageOf(error)}`));
    this.history = opts.history ?? new MemoryHistoryStore(this.config.agents.defaults.max_history_messages);
    this.outbox = new Outbox((key, dropped) => this.logger.warn(`dropped ${dropped} undelivered message(s) of ${key}: nobody collected them`));
    this.todos = createPlanStore(this.config.tools.todo.max_plans);
    this.lifecycle.register(this.todos);
    this.lifecycle.register(this.notes);
    const phasesTool = createPhasesTool(phasesView(this.todos));
    this.subturns = new Subturns({
      config: this.config,
      events: this.events,
      lifecycle: this.lifecycle,
      history: this.history,
      outbox: this.outbox,
      logger: this.logger,
      clock: this.clock,
      timer: opts.timer,
      ids: this.ids,
      runTurn: (agent, key, text, signal) => this.locks.run(key, () => this.turn(agent, key, text, signal, () => {})),
    });
    const subagentTools = createSubagentTools({
      subturns: this.subturns,
      agents: this.agents,
      deliverReplies: this.config.tools.subagent.deliver,
      holdStop: (key) => this.holdStop(key),
      announce: (parentKey, parentAgent, result) => this.announce(parentKey, parentAgent, result),
      track: (work) => this.track(work),
    });
    this.tools = new ToolRegistry([createTodoTool(listView(this.todos)), ...subagentTools, ...(opts.tools ?? [])]);
    this.toolStates = new ToolStates();
    this.lifecycle.register(this.toolStates);
    this.policy = new ToolPolicy(this.tools, this.config.tools, {
      now: () => this.clock.now(),
      state: this.toolStates,
      switches: opts.toolSwitches ?? [],
      variant: (tool, agent) => (tool.name === "todo" && this.todoStyleOf(agent) === "phases" ? phasesTool : tool),
    });
    this.commands.add(clearCommand((_agentId, sessionKey) => this.clearSession(sessionKey)));
    this.commands.add(stopCommand((sessionKey) => this.stop(sessionKey)));
    this.commands.add(subagentsCommand((sessionKey) => this.subturns.below(sessionKey), () => this.clock.now()));
    this.commands.add(
      todoCommand({
        store: this.todos,
        events: this.events,
        styleOf: (agentId) => this.todoStyleOf(this.agent(agentId)),
        hasTodo: (agentId) => this.policy.toolSet(this.agent(agentId)).has("todo"),
        noteForModel: (agentId, sessionKey, note) => this.notes.set(agentId, sessionKey, note),
      }),
    );
    this.commands.add(helpCommand(this.commands));
  }

  /** Which form of the todo tool an agent gets: its AGENT.md todo_style, else tools.todo.style. */
  todoStyleOf(agent: AgentDefinition): TodoStyle {
    return agent.todoStyle ?? this.config.tools.todo.style;
  }

  addCommand(command: Command): void {
    this.commands.add(command);
  }

  /** Warnings worth printing at start-up (unknown tools, models or agents named by config and AGENT.md files). */
  startupWarnings(): string[] {
    return [...this.policy.configWarnings(), ...agentWarnings(this.agents, this.policy, this.config)];
  }

  agent(agentId: string): AgentDefinition {
    const agent = this.agents.get(agentId);
    if (!agent) throw new RequestError(404, "agent_not_found", `unknown agent "${agentId}"`);
    return agent;
  }

  modelNameOf(agent: AgentDefinition): string {
    return agent.model ?? this.config.agents.defaults.model_name;
  }

  summaries(): AgentSummary[] {
    return agentSummaries(this.agents, this.policy, (agent) => this.modelNameOf(agent));
  }

  /** Empties a session: its history (and kept histories of its finished subagents) first, then every per-session store. */
  async clearSession(sessionKey: string): Promise<void> {
    for (const key of this.history.keys()) if (isWithin(key, sessionKey) && !this.subturns.isRunning(key)) this.history.clear(key);
    await this.lifecycle.clear(sessionKey, "clear");
    this.events.emit("session.cleared", { agentId: agentOfKey(sessionKey) ?? "", sessionKey, reason: "clear" });
  }

  /** Aborts the session's running and queued turns and every subagent below it, at once. */
  stop(sessionKey: string): { stopped: boolean; subagents: number } {
    const subagents = this.subturns.below(sessionKey).length;
    return { stopped: this.stops.stop(rootKey(sessionKey)), subagents };
  }

  /**
   * One message from a chat user: a slash command is answered here; anything
   * else is a turn of the agent. Turns (and locked commands) on one session
   * key run one at a time in arrival order; other sessions run in parallel.
   */
  async handleMessage(input: MessageInput): Promise<MessageOutcome> {
    if (this.closing) throw new AbortedError("the gateway is shutting down");
    const agent = this.agent(input.agentId);
    if (!CHAT_ID.test(input.chatId)) {
      throw new RequestError(400, "invalid_request", `session: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${JSON.stringify(input.chatId)})`);
    }
    const sessionKey = sessionKeyFor(agent.id, input.channel, input.chatId);
    if (!parseSessionKey(sessionKey)) throw new RequestError(400, "invalid_request", `channel: not a valid channel name: ${JSON.stringify(input.channel)}`);
    const matched = this.commands.match(input.text);
    const stop = matched && !matched.command.locked ? undefined : this.stops.hold(rootKey(sessionKey));
    // One signal for the whole message: the client, the session's stop switch, shutdown.
    const joined = joinSignals([this.shutdown.signal, stop?.signal, input.signal]);
    const signal = joined.signal;
    const delivered: Delivery[] = [];
    const deliver = (delivery: Delivery) => {
      delivered.push(delivery);
      this.events.emit("delivery", { agentId: agent.id, sessionKey, ...delivery });
      this.outbox.publish(sessionKey, { type: "delivery", ...delivery });
    };

    const work = async (): Promise<string> => {
      signal.throwIfAborted();
      if (matched) {
        const reply = await matched.command.run({ agentId: agent.id, sessionKey, args: matched.args, signal });
        deliver({ from: "command", text: reply });
        return reply;
      }
      return this.turn(agent, sessionKey, input.text, signal, deliver);
    };
    const task = stop ? this.locks.run(sessionKey, work) : work();
    this.track(task);
    try {
      const reply = await task;
      return { agentId: agent.id, sessionKey, reply, delivered };
    } finally {
      stop?.release();
      joined.dispose();
    }
  }

  /** The session's stop switch joined with shutdown; held until released. */
  private holdStop(sessionKey: string): { signal: AbortSignal; release: () => void } {
    const held = this.stops.hold(rootKey(sessionKey));
    const joined = joinSignals([held.signal, this.shutdown.signal]);
    return {
      signal: joined.signal,
      release: () => {
        held.release();
        joined.dispose();
      },
    };
  }

  private track(task: Promise<unknown>): void {
    this.inflight.add(task);
    const forget = () => this.inflight.delete(task);
    task.then(forget, forget);
  }

  private async turn(
    agent: AgentDefinition,
    sessionKey: string,
    text: string,
    signal: AbortSignal,
    deliver: (d: Delivery) => void,
  ): Promise<string> {
    const turnId = this.ids();
    const started = this.clock.now();
    const scope = { agentId: agent.id, sessionKey, turnId };
    this.events.emit("turn.start", { ...scope, text });
    const note = this.notes.get(agent.id, sessionKey);
    try {
      const result = await runTurn({
        ...(note === undefined ? {} : { note }),
        turnId,
        agent,
        sessionKey,
        text,
        signal,
        provider: this.models.get(this.modelNameOf(agent)),
        tools: this.policy.toolSet(agent, isSubagentKey(sessionKey)),
        maxIterations: this.config.agents.defaults.max_tool_iterations,
        history: this.history,
        events: this.events,
        deliver,
        now: () => this.clock.now(),
      });
      if (note !== undefined && this.notes.get(agent.id, sessionKey) === note) this.notes.delete(agent.id, sessionKey);
      this.events.emit("turn.end", {
        ...scope,
        outcome: result.hitLimit ? "limit" : "done",
        durationMs: this.clock.now() - started,
      });
      return result.reply;
    } catch (error) {
      this.events.emit("turn.end", {
        ...scope,
        outcome: signal.aborted ? "aborted" : "error",
        durationMs: this.clock.now() - started,
        error: messageOf(error),
      });
      throw error;
    }
  }

  /** A spawned child ended: the parent answers its result in a turn of its own (only in a user's own session). */
  private announce(parentKey: string, parentAgent: AgentDefinition, result: ChildResult): void {
    // A child stopped by /stop (or shutdown) wakes nobody: the user asked for quiet. Its end is on the events stream.
    if (this.closing || isSubagentKey(parentKey) || result.outcome === "aborted") return;
    this.track(
      answerInBackground(
        {
          events: this.events,
          outbox: this.outbox,
          logger: this.logger,
          runQueuedTurn: (agent, key, text, deliver) => {
            const stop = this.holdStop(key);
            return this.locks
              .run(key, async () => {
                stop.signal.throwIfAborted();
                return this.turn(agent, key, text, stop.signal, deliver);
              })
              .finally(stop.release);
          },
        },
        parentKey,
        parentAgent,
        result,
      ),
    );
  }

  /** Aborts when the runtime shuts down (long-lived streams end with it). */
  get shutdownSignal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** The session's history in OpenAI roles. */
  historyOf(sessionKey: string): ChatMessage[] {
    return this.history.get(sessionKey);
  }

  /** Resolves once nothing is running or waiting (for one-shot commands that must not cut off background work). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /**
   * Stops taking messages, lets running turns finish for up to `graceMs`,
   * then aborts what is left (subagents included) and waits for it to unwind.
   */
  async close(graceMs = 5000): Promise<void> {
    this.closing = true;
    const pending = [...this.inflight];
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.allSettled(pending), grace]);
      clearTimeout(timer);
    }
    this.shutdown.abort(new AbortedError("the gateway is shutting down"));
    await Promise.allSettled([...this.inflight]);
    await Promise.allSettled(this.closers.splice(0).map((close) => close()));
  }

  /** Something to stop when the runtime closes (MCP servers). */
  onClose(close: () => Promise<void> | void): void {
    this.closers.push(close);
  }
}
