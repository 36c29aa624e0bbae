import { nanoid } from "nanoid";
import type { AgentDefinition } from "../agents/agent.js";
import { type AgentSummary, agentSummaries, agentWarnings } from "../agents/overview.js";
import { ToolPolicy } from "../agents/policy.js";
import { reservedToolKeys } from "../config/layout.js";
import type { Config } from "../config/schema.js";
import { AbortedError, RequestError, messageOf } from "../errors.js";
import { EventBus, type EventName, type Listener } from "../port/events.js";
import type { Clock, Delivery, Feature } from "../port/feature.js";
import type { FeatureRoute } from "../port/route.js";
import { type Logger, silentLogger } from "../log.js";
import type { ChatMessage } from "../models/message.js";
import { RequestMemos } from "../models/request-memo.js";
import type { HistoryPage, HistoryStore } from "../session/history.js";
import { agentOfKey } from "../session/key.js";
import { SessionLifecycle } from "../session/state.js";
import { realTimer } from "../signals.js";
import { noRedaction } from "../tools/redact.js";
import { ToolStates } from "../tools/tool-states.js";
import type { Approval } from "../tools/approval.js";
import type { AnyTool } from "../tools/registry.js";
import { CommandRegistry, clearCommand, helpCommand, newCommand, stopCommand } from "./messages/commands.js";
import { BackgroundTurns } from "./messages/background-turns.js";
import { TurnQueue } from "../session/turn-queue.js";
import { type FeatureStateStore, stateView } from "../session/feature-state.js";
import type { SessionOutbox, SessionStream, SubscribeOptions } from "../session/outbox.js";
import type { StopBoard } from "../session/stop-switches.js";
import type { StoreConnection } from "../session/store.js";
import { withInProcessPorts } from "./assembly/session-ports.js";
import { featureHost } from "./host.js";
import { processEnvironment } from "./assembly/process-env.js";
import { AgentWorkspaces } from "./assembly/workspaces.js";
import { SessionControl } from "./messages/session-control.js";
import { FeatureSet } from "./assembly/feature-set.js";
import { MessageWatches } from "./streams/message-stream.js";
import { MessagePipeline } from "./messages/message-pipeline.js";
import { OneMessageSessions } from "./messages/one-message-sessions.js";
import type { ConversationInput, MessageInput, MessageOutcome, RuntimeOptions, RuntimeStats, SessionSummary, ToolEntry, ToolOverview } from "./options.js";
import { APPROVALS_NAMESPACE, ApprovalDesk } from "./approvals/desk.js";
import type { Approvals } from "../port/approvals.js";
import type { Pairings } from "../port/pairings.js";
import { PAIRINGS_NAMESPACE, PairingBook } from "./pairing/book.js";
import { isTransientKey, parseSessionKey } from "../session/key.js";
import { ContextFitter } from "./context/context-provider.js";
import { announceTurns } from "./streams/turn-notices.js";
import { SystemPrompt } from "./turn/system-prompt.js";
import { TurnNotes } from "./turn/turn-notes.js";
import { type ModelSource, TurnRunner } from "./turn/turn-runner.js";
import { Work } from "./turn/work.js";
import { quoted } from "../validation.js";

/**
 * The provider-free core: agents, models, sessions, turns, slash commands.
 * It names no feature: todo, subagents, plugins and MCP plug in through
 * `features`. The gateway and the CLI both drive it through `handleMessage`.
 */
export class Runtime {
  private readonly config: Config;
  private readonly agents: ReadonlyMap<string, AgentDefinition>;
  private readonly events: EventBus;
  private readonly lifecycle = new SessionLifecycle();
  private readonly commands = new CommandRegistry();
  private readonly features = new FeatureSet();
  private readonly policy: ToolPolicy;
  private readonly models: ModelSource;
  private readonly history: HistoryStore;
  private readonly clock: Clock;
  private readonly ids: () => string;
  private readonly logger: Logger;
  /** What reaches users outside a request: background deliveries and notices. */
  private readonly outbox: SessionOutbox;
  /** The order of turns per session (the session lock), behind the bounded queue where turns wait for it. */
  private readonly locks: TurnQueue;
  private readonly stops: StopBoard;
  /** Features' durable state (each sees its own namespace). */
  private readonly state: FeatureStateStore;
  /** The store's connection, when it has one (a database). */
  private readonly connection: StoreConnection | undefined;
  private readonly shutdown = new AbortController();
  private readonly work = new Work();
  /** Background turns asked for and not yet ended: a clear drops them. */
  private readonly background = new BackgroundTurns();
  /** Notes for an agent's next turn in a session, given once. */
  private readonly notes = new TurnNotes();
  private readonly toolStates = new ToolStates();
  private readonly warnings: string[] = [];
  private readonly turns: TurnRunner;
  /** Messages whose events a caller follows (`onEvent`), while they hold their session. */
  private readonly watches: MessageWatches;
  /** Sessions of conversations the client keeps (`converse`), released when their message ends. */
  private readonly oneMessage: OneMessageSessions;
  private readonly pipeline: MessagePipeline;
  /** `/clear` and `/stop`. */
  private readonly control: SessionControl;
  /** Calls and questions waiting for a person. */
  private readonly desk: ApprovalDesk;
  /** Chat users the owner let in, and the codes waiting for the owner. */
  private readonly book: PairingBook;
  private closing = false;
  /** What `connect()` began, once. */
  private connecting: Promise<string[]> | undefined;

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.agents = opts.agents;
    this.models = opts.models;
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.ids = opts.ids ?? (() => nanoid(12));
    this.logger = opts.logger ?? silentLogger;
    this.events = new EventBus((error, event) => this.logger.error(`a listener of ${event} failed: ${messageOf(error)}`));
    const ports = withInProcessPorts(opts, this.config, this.logger);
    this.history = ports.history;
    const { max_queued_turns, max_queued_bytes } = this.config.gateway.limits;
    this.locks = new TurnQueue(ports.order, { maxTurns: max_queued_turns, maxBytes: max_queued_bytes });
    this.stops = ports.stops;
    this.outbox = ports.outbox;
    this.state = ports.state;
    this.connection = opts.connection;
    this.watches = new MessageWatches(this.events);
    this.oneMessage = new OneMessageSessions({
      history: this.history,
      lifecycle: this.lifecycle,
      outbox: this.outbox,
      events: this.events,
      acceptImages: (agent, images) => this.turns.acceptImages(agent, images),
    });
    announceTurns(this.events, (sessionKey, notice) => this.outbox.publish(sessionKey, notice));
    const notify = (sessionKey: string, event: string, data: Readonly<Record<string, unknown>>) => {
      this.outbox.publish(sessionKey, { type: "notice", event, data });
      this.watches.notice(sessionKey, event, data);
    };
    this.desk = new ApprovalDesk({
      clock: this.clock,
      timer: opts.timer ?? realTimer,
      ids: this.ids,
      timeoutMs: this.config.tools.approval_timeout_ms,
      events: this.events,
      notify,
      history: this.history,
      state: stateView(this.state, APPROVALS_NAMESPACE),
      redact: opts.redact ?? noRedaction,
      logger: this.logger,
      track: (work) => this.work.track(work),
      nobodyAnswers: (sessionKey) => {
        if (opts.nobodyAnswers !== undefined) return opts.nobodyAnswers;
        if (isTransientKey(sessionKey)) return "nobody can answer in a conversation the client keeps (a stateless request)";
        const channel = parseSessionKey(sessionKey)?.channel;
        if (channel !== undefined && opts.channelsWithoutAsking?.includes(channel)) {
          return `nobody can answer in a ${channel} conversation (its clients cannot show an approval request or a question)`;
        }
        return undefined;
      },
      ...(ports.order.heldElsewhere ? { heldElsewhere: (sessionKey: string) => ports.order.heldElsewhere!(sessionKey) } : {}),
    });
    this.book = new PairingBook({
      state: stateView(this.state, PAIRINGS_NAMESPACE),
      clock: this.clock,
      logger: this.logger,
      ...(opts.pairingCodes ? { codes: opts.pairingCodes } : {}),
    });
    this.lifecycle.register(this.desk);
    this.lifecycle.register(this.notes);
    this.lifecycle.register(this.toolStates);
    this.policy = new ToolPolicy(this.features.tools.registry, this.config.tools, {
      reserved: opts.reservedToolKeys ?? reservedToolKeys(opts.features ?? []),
      now: () => this.clock.now(),
      state: this.toolStates,
      switches: opts.toolSwitches ?? [],
      ...(opts.toolSwitchSources ? { sources: opts.toolSwitchSources } : {}),
      variant: (tool, agent) => this.features.tools.formFor(tool, agent),
      arrivesLater: (name) => this.features.arrivesLater(name),
      ...(opts.redact ? { redact: opts.redact } : {}),
    });

    const memoBytes = this.config.session.request_memo_bytes;
    const memos = memoBytes > 0 ? new RequestMemos(memoBytes) : undefined;
    // A cleared history's messages are gone: its memo would only hold their text.
    if (memos) this.events.on("session.cleared", ({ sessionKey }) => memos.forget(sessionKey));
    this.turns = new TurnRunner({
      config: this.config,
      events: this.events,
      history: this.history,
      models: this.models,
      context: new ContextFitter(this.config, this.history),
      policy: this.policy,
      notes: this.notes,
      work: this.work,
      clock: this.clock,
      turnTimer: opts.turnTimer ?? realTimer,
      ids: this.ids,
      modelNameOf: (agent) => this.modelNameOf(agent),
      system: new SystemPrompt(this.features.prompt, this.logger),
      gate: this.desk.gate,
      ...(memos ? { memos } : {}),
    });
    this.pipeline = new MessagePipeline({
      commands: this.commands,
      turns: this.turns,
      events: this.events,
      outbox: this.outbox,
      locks: this.locks,
      stops: this.stops,
      background: this.background,
      work: this.work,
      watches: this.watches,
      shutdown: this.shutdown.signal,
      closing: () => this.closing,
      warn: (message) => this.logger.warn(message),
      questions: this.desk,
    });
    this.control = new SessionControl({
      work: this.work,
      background: this.background,
      lifecycle: this.lifecycle,
      outbox: this.outbox,
      history: this.history,
      events: this.events,
      stops: this.stops,
    });
    const workspaces = new AgentWorkspaces(this.config);
    const host = featureHost({
      defaultAgentId: this.config.agents.default,
      agents: this.agents,
      agent: (agentId) => this.agent(agentId),
      events: this.events,
      history: this.history,
      logger: this.logger,
      clock: this.clock,
      timer: opts.timer ?? realTimer,
      ids: this.ids,
      policy: this.policy,
      notes: this.notes,
      locks: this.locks,
      turns: this.turns,
      pipeline: this.pipeline,
      outbox: this.outbox,
      watches: this.watches,
      work: this.work,
      lifecycle: this.lifecycle,
      features: this.features,
      workspaces,
      processEnv: processEnvironment(opts.env ?? {}, opts.redact ?? noRedaction),
      notify,
      approvals: this.desk,
      pairings: this.book,
      locations: opts.locations ?? {},
      chatChannels: new Set(this.config.channel_list.map((entry) => entry.name ?? entry.type)),
      handleMessage: (input) => this.handleMessage(input),
    });
    this.features.install(opts.features ?? [], host, this.config, [...(opts.tools ?? [])], (feature) => ({ state: stateView(this.state, feature.name) }), [
      APPROVALS_NAMESPACE,
      PAIRINGS_NAMESPACE,
    ]);
    workspaces.allowRead(this.features.readPaths);
    for (const command of this.features.commands) this.commands.add(command);
    for (const owner of this.features.sessionState) this.lifecycle.register(owner);
    this.warnings.push(...this.features.warnings);
    const clearing = (sessionKey: string) => this.desk.clearing(sessionKey);
    this.commands.add(clearCommand((_agentId, sessionKey) => this.control.clear(sessionKey), clearing));
    this.commands.add(newCommand((_agentId, sessionKey) => this.control.clear(sessionKey), clearing));
    this.commands.add(stopCommand((sessionKey) => this.stop(sessionKey)));
    this.commands.add(helpCommand(this.commands));
    this.warnings.push(...this.policy.configWarnings(), ...agentWarnings(this.agents, this.policy, this.config));
  }

  /**
   * Starts what features take from outside the gateway (chat channels), all
   * at once; called when the gateway listens. One that fails leaves the
   * others running: its failure comes back as a warning naming it. Begins
   * `connect()` too, unless it was begun already, and logs its warnings.
   */
  async start(): Promise<string[]> {
    if (this.closing) return [];
    // What tools live on (MCP servers) is reached in the background: no channel, and no answer, waits for it.
    if (!this.connecting) {
      void this.connect().then((warnings) => {
        for (const warning of warnings) this.logger.warn(warning);
      });
    }
    const warnings: string[] = [];
    try {
      const left = await this.desk.recover();
      if (left > 0)
        this.logger.warn(
          `${left} approval request${left === 1 ? " was" : "s were"} left waiting by the last run: denied, and recorded in their sessions' histories`,
        );
    } catch (error) {
      warnings.push(`approval requests left waiting by the last run could not be read: ${messageOf(error)}`);
    }
    return [...warnings, ...(await this.features.start())];
  }

  /**
   * Makes in the background what a first turn would make (each agent's
   * tools as the model is shown them, its model provider's answer reader),
   * so the first turn after start does not wait for it. Never throws: what
   * cannot be made (a model, a tool's schema) is left to the turn, which
   * says why (it runs unawaited, where a rejection would end the process).
   */
  async warm(): Promise<void> {
    const quietly = async (make: () => unknown) => {
      try {
        await make();
      } catch {}
    };
    // Each tool's schema in a turn of its own: a request that comes meanwhile is answered first.
    for (const agent of this.agents.values()) await quietly(() => this.policy.toolSet(agent).warm());
    for (const name of new Set([...this.agents.values()].map((agent) => this.modelNameOf(agent)))) {
      await quietly(() => this.models.get(name).warm?.());
    }
  }

  /**
   * Reaches what the features' tools live on (the MCP servers start), once:
   * their tools are added as each arrives, and a turn that begins before
   * then runs without them. Resolves with warnings (a server that did not
   * start; it is retried in the background) once each is up or has failed
   * once. `start()` begins it; a one-turn command waits for it.
   */
  connect(): Promise<string[]> {
    if (this.closing) return Promise.resolve([]);
    this.connecting ??= this.features.connect();
    return this.connecting;
  }

  /** Chat users the owner let in, and the codes waiting for the owner (the pairing routes, `picoclaw pairing`). */
  get pairings(): Pairings {
    return this.book;
  }

  /** Calls and questions waiting for a person, and how a person answers them (the approvals route, the REPL). */
  get approvals(): Approvals {
    return this.desk;
  }

  /** Warnings worth printing at start-up (features', and unknown tools, models or agents named by config and AGENT.md files). */
  startupWarnings(): string[] {
    return [...this.warnings];
  }

  agent(agentId: string): AgentDefinition {
    const agent = this.agents.get(agentId);
    if (!agent) throw new RequestError("agent_not_found", `unknown agent ${quoted(agentId)}`);
    return agent;
  }

  agentIds(): string[] {
    return [...this.agents.keys()];
  }

  /** The agent a message goes to when it names none (`agents.default`). */
  get defaultAgentId(): string {
    return this.config.agents.default;
  }

  modelNameOf(agent: AgentDefinition): string {
    return agent.model ?? this.config.agents.defaults.model_name;
  }

  summaries(): AgentSummary[] {
    const providers = new Map(this.config.model_list.map((entry) => [entry.model_name, entry.provider]));
    return agentSummaries(
      this.agents,
      this.policy,
      (agent) => this.modelNameOf(agent),
      (model) => providers.get(model) ?? "unknown",
    );
  }

  /** Every tool the gateway has, where it came from and whether config switches it on. */
  toolOverview(): ToolOverview[] {
    const { tools } = this.features;
    return tools.registry.all().map((tool) => ({ name: tool.name, origin: tools.originOf(tool.name)!, enabled: this.policy.isEnabled(tool) }));
  }

  /** Every tool the gateway has as the tool library shows it: where it came from, whether it is on and what says so, who is offered it, its approval policy. */
  toolLibrary(): ToolEntry[] {
    return this.features.tools.registry.all().map((tool) => this.entryOf(tool));
  }

  /** One tool of the library, or undefined when the gateway has no tool by that name. */
  toolEntry(name: string): ToolEntry | undefined {
    const tool = this.features.tools.registry.get(name);
    return tool && this.entryOf(tool);
  }

  /**
   * Switches a tool on or off from the next turn on (its agents' tool sets
   * are made again; a turn already running keeps the set it started with).
   * The caller wrote the config file first. A tool an environment variable
   * switches is refused (`tool_locked`, naming it): the variable would win.
   */
  setToolEnabled(name: string, enabled: boolean): ToolEntry {
    this.switchableTool(name);
    this.policy.setEnabled(name, enabled);
    return this.toolEntry(name)!;
  }

  /** The tool's entry when its switch may change here; else `tool_not_found`, or `tool_locked` naming the variable that holds it. */
  switchableTool(name: string): ToolEntry {
    const entry = this.toolEntry(name);
    if (!entry) throw new RequestError("tool_not_found", `there is no tool named ${JSON.stringify(name)}`);
    if (entry.source === "env") {
      throw new RequestError(
        "tool_locked",
        `${entry.envVar} sets whether "${entry.name}" is on, and it wins over the config file: unset it (and restart) to switch the tool here`,
      );
    }
    return entry;
  }

  private entryOf(tool: AnyTool): ToolEntry {
    const state = this.policy.stateOf(tool);
    const agentApprovals: Record<string, Approval> = {};
    for (const agent of this.agents.values()) {
      const own = agent.approval?.[tool.name];
      if (own !== undefined) agentApprovals[agent.id] = own;
    }
    return {
      name: tool.name,
      origin: this.features.tools.originOf(tool.name)!,
      enabled: state.enabled,
      source: state.source,
      ...(state.variable === undefined ? {} : { envVar: state.variable }),
      agents: [...this.agents.values()]
        .filter((agent) => this.policy.effectiveTools(agent).some((offered) => offered.name === tool.name))
        .map((agent) => agent.id)
        .sort(),
      approval: this.policy.configuredApproval(tool),
      agentApprovals,
    };
  }

  /** What a feature offers the program that embeds it, and tests (the todo feature's plan store); undefined when it is not installed. */
  featureApi<Api>(feature: Feature<Api>): Api | undefined {
    return this.features.apiOf(feature);
  }

  /** HTTP routes the features add (the gateway mounts them). */
  routes(): readonly FeatureRoute[] {
    return this.features.routes;
  }

  /** Listens to the runtime's events (logs, embedders); returns the function that stops listening. */
  on<K extends EventName>(event: K, listener: Listener<K>): () => void {
    return this.events.on(event, listener);
  }

  /**
   * A stream of what reaches the session outside requests (first what was
   * kept, and with `after`, the last event id its client got, what came
   * after it), through a bounded queue; `close` it when done.
   */
  subscribe(sessionKey: string, options: SubscribeOptions = {}): SessionStream {
    return this.outbox.subscribe(sessionKey, options);
  }

  /** Deliveries kept for the session while no stream was open, oldest first; handed out once. */
  takeDeliveries(sessionKey: string): Promise<Delivery[]> {
    return this.outbox.drain(sessionKey);
  }

  /** Empties a session as `/clear` does, waiting its turn on the session lock like `/clear`: nothing from before comes back. */
  async clearSession(sessionKey: string): Promise<void> {
    const cleared = this.desk.clearing(sessionKey);
    try {
      await this.locks.run(sessionKey, () => this.control.clear(sessionKey));
    } finally {
      cleared();
    }
  }

  /** Aborts the session's running and queued turns and every sub-turn below it, at once. */
  stop(sessionKey: string): Promise<{ stopped: boolean; subagents: number }> {
    return this.control.stop(sessionKey);
  }

  /**
   * One message from a chat user: a slash command is answered here; anything
   * else is a turn of the agent. Turns (and locked commands) on one session
   * key run one at a time in arrival order; other sessions run in parallel.
   */
  async handleMessage(input: MessageInput): Promise<MessageOutcome> {
    if (this.closing) throw new AbortedError("the gateway is shutting down");
    const agent = this.agent(input.agentId);
    return this.pipeline.run(agent, this.pipeline.keyFor(agent.id, input.channel, input.chatId), input);
  }

  /**
   * What `handleMessage` would refuse before anything runs (an unknown
   * agent, a bad chat id, images its model cannot take), thrown as the same
   * RequestError: a streamed answer checks first, so that a bad request is
   * an error status, not a stream that ends in an error.
   */
  checkMessage(input: Omit<MessageInput, "signal" | "onEvent">): void {
    const agent = this.agent(input.agentId);
    this.pipeline.keyFor(agent.id, input.channel, input.chatId);
    this.pipeline.checkImages(agent, input.text, input.images ?? []);
  }

  /** What `converse` would refuse before anything runs: `checkMessage`'s checks, and the images of the conversation's earlier messages. */
  checkConversation(input: Omit<ConversationInput, "signal" | "onEvent">): void {
    this.checkMessage({ ...input, chatId: "ephemeral" });
    this.oneMessage.checkEarlierImages(this.agent(input.agentId), input.history);
  }

  /**
   * One message of a conversation the client keeps (a stateless request):
   * its history and the client's system texts (after the agent's prompt)
   * are set up under a session key made for it, with the tools a one-turn
   * session may use (no `spawn`: its result would come after the end); when
   * the message settles, however it ends, that session's history and every
   * per-session state are released.
   */
  async converse(input: ConversationInput): Promise<MessageOutcome> {
    if (this.closing) throw new AbortedError("the gateway is shutting down");
    const { agent, sessionKey } = this.oneMessage.open(this.agent(input.agentId), input, this.ids());
    return this.oneMessage.run(sessionKey, input.history, () => this.pipeline.run(agent, sessionKey, input, true));
  }

  /** Aborts when the runtime shuts down (long-lived streams end with it). */
  get shutdownSignal(): AbortSignal {
    return this.shutdown.signal;
  }

  /** The session's history in OpenAI roles. */
  historyOf(sessionKey: string): Promise<ChatMessage[]> {
    return this.history.get(sessionKey);
  }

  /** The last `limit` messages of the session's history (the history API), without marking the session used. */
  historyPage(sessionKey: string, limit: number): Promise<HistoryPage> {
    return this.history.page(sessionKey, limit);
  }

  /** Keys of the sessions that have a history in memory. */
  sessionKeys(): string[] {
    return this.history.keys();
  }

  /** Root sessions with a history (kept on disk too, with store jsonl), the most recently changed first, at most `limit`. */
  async sessions(limit: number): Promise<SessionSummary[]> {
    return (await this.history.list(limit)).map((info) => ({ ...info, agentId: agentOfKey(info.key) ?? "" }));
  }

  /** How much the runtime holds now, entry by entry (for tests and metrics: every one must fall back when work ends). */
  stats(): RuntimeStats {
    return {
      sessions: this.history.size,
      historyBytes: this.history.bytes,
      toolStates: this.toolStates.size,
      notes: this.notes.size,
      locks: this.locks.size,
      stopSwitches: this.stops.size,
      runningTurns: this.work.runningCount,
      queuedTurns: this.work.queuedCount,
      queuedBytes: this.locks.waitingBytes,
      inflight: this.work.inflightCount,
      watchedMessages: this.watches.size,
      waitingForPeople: this.desk.size,
    };
  }

  /** Resolves once nothing is running or waiting (for one-shot commands that must not cut off background work). */
  async idle(): Promise<void> {
    await this.work.idle();
  }

  /**
   * Stops the features' input (chat channels stop polling), stops taking
   * messages, lets running turns finish for up to `graceMs`, then aborts
   * what is left (sub-turns included), waits for it to unwind and closes the
   * features.
   */
  async close(graceMs = 5000): Promise<void> {
    await this.features.stopInput();
    this.closing = true;
    // Nobody will answer now: what waits for a person is denied, and its turn ends within the grace.
    this.desk.shutdown();
    const pending = this.work.pending();
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.allSettled(pending), grace]);
      clearTimeout(timer);
    }
    this.shutdown.abort(new AbortedError("the gateway is shutting down"));
    await this.idle();
    await this.features.close();
    // Last: the session files (writes under way finish, then the folder's lock goes).
    try {
      await this.state.close();
    } finally {
      try {
        await this.history.close();
      } finally {
        await this.connection?.close();
      }
    }
  }

  /** Resolves once the session store can be used (a database reached, its schema migrated); at once for a store in this process. */
  async storeReady(): Promise<void> {
    await this.connection?.ready();
  }

  /** Resolves when the session store answers now (GET /ready); rejects saying why it does not. A store in this process always answers. */
  async probeStore(): Promise<void> {
    await this.connection?.probe();
  }
}
