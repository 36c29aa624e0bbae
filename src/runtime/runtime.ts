import { nanoid } from "nanoid";
import type { AgentDefinition } from "../agents/agent.js";
import { ToolPolicy } from "../agents/policy.js";
import type { Config } from "../config/schema.js";
import { AbortedError, RequestError, messageOf } from "../errors.js";
import { type Logger, silentLogger } from "../log.js";
import type { ChatMessage } from "../models/message.js";
import type { ModelProvider } from "../models/provider.js";
import { type AnyTool, ToolRegistry } from "../tools/registry.js";
import { type TodoPlanStore, createTodoStore, createTodoTool } from "../tools/todo/tool.js";
import { type Command, CommandRegistry, clearCommand, helpCommand } from "./commands.js";
import { EventBus } from "./events.js";
import { type HistoryStore, MemoryHistoryStore } from "./history.js";
import { KeyedLocks } from "./locks.js";
import { SessionLifecycle } from "./session-state.js";
import { agentOfKey, sessionKeyFor } from "./session-key.js";
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
  clock?: Clock;
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

export interface AgentSummary {
  id: string;
  name: string;
  description: string;
  model: string;
  tools: string[];
}

/**
 * The provider-free core: agents, tools, models, sessions. The gateway and
 * the CLI both drive it through `handleMessage`.
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
  /** The todo plans of every agent and session (one store, shared). */
  readonly todos: TodoPlanStore;

  private readonly models: ModelSource;
  private readonly locks = new KeyedLocks();
  private readonly shutdown = new AbortController();
  private readonly inflight = new Set<Promise<unknown>>();
  private closing = false;

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.agents = opts.agents;
    this.models = opts.models;
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.ids = opts.ids ?? (() => nanoid(12));
    this.logger = opts.logger ?? silentLogger;
    this.events = new EventBus((error, event) => this.logger.error(`a listener of ${event} failed: ${messageOf(error)}`));
    this.history = opts.history ?? new MemoryHistoryStore();
    this.todos = createTodoStore(this.config.tools.todo.max_plans);
    this.lifecycle.register(this.todos);
    this.tools = new ToolRegistry([createTodoTool(this.todos), ...(opts.tools ?? [])]);
    this.policy = new ToolPolicy(this.tools, this.config.tools, () => this.clock.now());
    this.commands.add(clearCommand((_agentId, sessionKey) => this.clearSession(sessionKey)));
    this.commands.add(helpCommand(this.commands));
  }

  addCommand(command: Command): void {
    this.commands.add(command);
  }

  /** Warnings worth printing at start-up: allowlists naming unknown tools, agents on unknown models. */
  startupWarnings(): string[] {
    const warnings = this.policy.allowlistWarnings(this.agents.values());
    const models = new Set(this.config.model_list.map((m) => m.model_name));
    for (const agent of this.agents.values()) {
      if (agent.model !== undefined && !models.has(agent.model)) {
        warnings.push(`${agent.file}: model "${agent.model}" is not a model_name in model_list; its turns will fail`);
      }
    }
    return warnings;
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
    return [...this.agents.values()]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((agent) => ({
        id: agent.id,
        name: agent.name,
        description: agent.description,
        model: this.modelNameOf(agent),
        tools: this.policy.effectiveToolNames(agent),
      }));
  }

  /** Empties a session: its history first, then every per-session store (todo plans...). */
  async clearSession(sessionKey: string): Promise<void> {
    this.history.clear(sessionKey);
    await this.lifecycle.clear(sessionKey, "clear");
    this.events.emit("session.cleared", { agentId: agentOfKey(sessionKey) ?? "", sessionKey, reason: "clear" });
  }

  /**
   * One message from a chat user: a slash command is answered here; anything
   * else is a turn of the agent. Turns (and locked commands) on one session
   * key run one at a time in arrival order; other sessions run in parallel.
   */
  async handleMessage(input: MessageInput): Promise<MessageOutcome> {
    if (this.closing) throw new AbortedError("the gateway is shutting down");
    const agent = this.agent(input.agentId);
    const sessionKey = sessionKeyFor(agent.id, input.channel, input.chatId);
    const signal = input.signal ? AbortSignal.any([input.signal, this.shutdown.signal]) : this.shutdown.signal;
    const delivered: Delivery[] = [];
    const deliver = (delivery: Delivery) => {
      delivered.push(delivery);
      this.events.emit("delivery", { agentId: agent.id, sessionKey, ...delivery });
    };

    const matched = this.commands.match(input.text);
    const work = async (): Promise<string> => {
      signal.throwIfAborted();
      if (matched) {
        const reply = await matched.command.run({ agentId: agent.id, sessionKey, args: matched.args, signal });
        deliver({ from: "command", text: reply });
        return reply;
      }
      return this.turn(agent, sessionKey, input.text, signal, deliver);
    };
    const task = matched && !matched.command.locked ? work() : this.locks.run(sessionKey, work);
    this.inflight.add(task);
    try {
      const reply = await task;
      return { agentId: agent.id, sessionKey, reply, delivered };
    } finally {
      this.inflight.delete(task);
    }
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
    try {
      const result = await runTurn({
        turnId,
        agent,
        sessionKey,
        text,
        signal,
        provider: this.models.get(this.modelNameOf(agent)),
        tools: this.policy.toolSet(agent),
        maxIterations: this.config.agents.defaults.max_tool_iterations,
        history: this.history,
        events: this.events,
        deliver,
        now: () => this.clock.now(),
      });
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

  /** The session's history in OpenAI roles. */
  historyOf(sessionKey: string): ChatMessage[] {
    return this.history.get(sessionKey);
  }

  /** Turns and commands running or waiting now. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /**
   * Stops taking messages, lets running turns finish for up to `graceMs`,
   * then aborts what is left and waits for it to unwind.
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
  }
}
