import type { AgentDefinition } from "../agents/agent.js";
import type { ToolPolicy } from "../agents/policy.js";
import type { Logger } from "../log.js";
import type { Approvals } from "../port/approvals.js";
import type { Pairings } from "../port/pairings.js";
import type { EventBus } from "../port/events.js";
import type { ChatInput, ChatOutcome, Clock, FeatureHost, Locations } from "../port/feature.js";
import type { HistoryStore } from "../session/history.js";
import { parseSessionKey } from "../session/key.js";
import type { SessionOutbox } from "../session/outbox.js";
import type { SessionLifecycle } from "../session/state.js";
import type { TurnQueue } from "../session/turn-queue.js";
import type { Timer } from "../signals.js";
import type { FeatureSet } from "./assembly/feature-set.js";
import type { AgentWorkspaces } from "./assembly/workspaces.js";
import type { MessagePipeline } from "./messages/message-pipeline.js";
import type { MessageWatches } from "./streams/message-stream.js";
import type { TurnNotes } from "./turn/turn-notes.js";
import type { TurnRunner } from "./turn/turn-runner.js";
import type { Work } from "./turn/work.js";

/** The runtime's parts a feature host is made of. */
export interface HostParts {
  defaultAgentId: string;
  agents: ReadonlyMap<string, AgentDefinition>;
  agent(agentId: string): AgentDefinition;
  events: EventBus;
  history: HistoryStore;
  logger: Logger;
  clock: Clock;
  timer: Timer;
  ids: () => string;
  policy: ToolPolicy;
  notes: TurnNotes;
  locks: TurnQueue;
  turns: TurnRunner;
  pipeline: MessagePipeline;
  outbox: SessionOutbox;
  watches: MessageWatches;
  work: Work;
  lifecycle: SessionLifecycle;
  features: FeatureSet;
  workspaces: AgentWorkspaces;
  processEnv: Readonly<Record<string, string>>;
  notify(sessionKey: string, event: string, data: Readonly<Record<string, unknown>>): void;
  approvals: Approvals;
  pairings: Pairings;
  locations: Locations;
  /** The names chat channels give their sessions (channel_list). */
  chatChannels: ReadonlySet<string>;
  handleMessage(input: ChatInput): Promise<ChatOutcome>;
}

/** What features get: the runtime's capabilities, as closures over its parts (`state` is each feature's own, added when it is set up). */
export function featureHost(p: HostParts): Omit<FeatureHost, "state"> {
  return {
    defaultAgentId: p.defaultAgentId,
    agents: p.agents,
    events: p.events,
    history: {
      get: (key) => p.history.get(key),
      page: (key, limit) => p.history.page(key, limit),
      append: (key, messages) => p.history.append(key, messages),
      replace: (key, messages) => p.history.replace(key, messages),
      clear: (key) => p.history.clear(key),
    },
    logger: p.logger,
    clock: p.clock,
    timer: p.timer,
    ids: p.ids,
    agent: (agentId) => p.agent(agentId),
    workspace: (agentId) => p.workspaces.of(p.agent(agentId)),
    processEnv: p.processEnv,
    isDurableSession: (sessionKey) => p.history.isDurable?.(sessionKey) ?? false,
    isChatSession: (sessionKey) => {
      const parts = parseSessionKey(sessionKey);
      // A key that is not one of ours is taken for a chat's: the safe answer.
      return parts === null || p.chatChannels.has(parts.channel);
    },
    hasTool: (agentId, tool) => p.policy.toolSet(p.agent(agentId)).has(tool),
    noteForNextTurn: (agentId, sessionKey, note, topic = "note") => {
      if (note === undefined) p.notes.drop(agentId, sessionKey, topic);
      else p.notes.set(agentId, sessionKey, topic, note);
    },
    runTurn: (agent, sessionKey, text, signal) => p.locks.run(sessionKey, async () => (await p.turns.run(agent, sessionKey, text, signal, () => {})).reply),
    runBackgroundTurn: (agent, sessionKey, text) => p.pipeline.backgroundTurn(agent, sessionKey, text),
    deliverLater: (agentId, sessionKey, delivery) => p.pipeline.deliverLater(agentId, sessionKey, delivery),
    notify: (sessionKey, event, data) => p.notify(sessionKey, event, data),
    approvals: p.approvals,
    pairings: p.pairings,
    locations: p.locations,
    holdStop: (sessionKey) => p.pipeline.holdStop(sessionKey),
    track: (work) => p.work.track(work),
    releaseSession: (sessionKey) => p.lifecycle.clear(sessionKey, "release"),
    addTools: (tools, origin) => {
      for (const clash of p.features.addLate(tools, origin)) p.logger.warn(clash);
      p.policy.refresh();
    },
    handleMessage: (input) => p.handleMessage(input),
    subscribe: (sessionKey, subscriber) => p.outbox.feed(sessionKey, subscriber),
  };
}
