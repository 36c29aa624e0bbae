import type { AgentDefinition } from "../../agents/agent.js";
import { messageOf } from "../../errors.js";
import type { FeatureHost } from "../../port/feature.js";
import type { ChatMessage } from "../../models/message.js";
import type { FeatureHistory } from "../../port/feature.js";
import { childSessionKey, depth, rootKey } from "../../session/key.js";
import { joinSignals } from "../../signals.js";
import type { ChildOutcome, ParentCall } from "./events.js";
import { Places } from "./places.js";
import type { SubturnLimits } from "./config.js";

/**
 * A child turn, defined here and nowhere else: a turn under
 * `<parent key>:subagent:<id>` with its own empty history and its own
 * per-session state, bounded (depth, running children per parent, time)
 * and always cleaned up: whatever way a child ends, `subagent.end` fires
 * exactly once and every per-session store releases the child's key.
 */

export interface ChildRequest {
  parentKey: string;
  /** The parent's turn and the tool call that asks for the child. */
  parentCall: ParentCall;
  parentAgent: AgentDefinition;
  /** The agent the child runs as. */
  agent: AgentDefinition;
  task: string;
  label: string;
  /** What stops the child besides its own time limit. */
  signal: AbortSignal;
}

export interface ChildResult {
  id: string;
  childKey: string;
  agentId: string;
  label: string;
  outcome: ChildOutcome;
  reply?: string;
  error?: string;
  durationMs: number;
}

export interface RunningChild {
  id: string;
  childKey: string;
  parentKey: string;
  agentId: string;
  label: string;
  depth: number;
  startedAt: number;
}

/** What child turns need from the runtime. */
export const SUBTURN_CAPABILITIES = ["events", "history", "logger", "clock", "timer", "ids", "runTurn", "notify", "releaseSession"] as const;
export type SubturnHost = Pick<FeatureHost, (typeof SUBTURN_CAPABILITIES)[number]>;

/** How child turns are bounded (agents.defaults.subturn) and whether a finished child's history is kept (tools.subagent.keep_history). */
export interface SubturnSettings {
  limits: SubturnLimits;
  keepHistory: boolean;
}

/** Longest task text a child accepts. */
export const MAX_TASK_BYTES = 64 * 1024;
/** Messages a kept child history holds at most (the oldest go first). */
export const MAX_CHILD_HISTORY = 200;

class ChildTimeout extends Error {}

export class Subturns {
  private readonly running = new Map<string, RunningChild>();
  /** Places for running children, per parent and in the whole gateway. */
  readonly places: Places;

  constructor(
    private readonly host: SubturnHost,
    private readonly settings: SubturnSettings,
  ) {
    this.places = new Places(settings.limits, host.timer);
  }

  private get limits() {
    return this.settings.limits;
  }

  /** Why a child of `parentKey` may not start, or null. */
  refusal(parentKey: string, task: string): string | null {
    const { max_depth } = this.limits;
    if (depth(parentKey) + 1 > max_depth) {
      return `subagents may nest at most ${max_depth} deep (agents.defaults.subturn.max_depth); do this work yourself`;
    }
    if (Buffer.byteLength(task, "utf8") > MAX_TASK_BYTES) return `the task is longer than ${MAX_TASK_BYTES} bytes; shorten it`;
    if (task.trim() === "") return "the task is empty";
    return null;
  }

  /**
   * Takes a place for a child of `parentKey` (`places.ts`: per parent and
   * gateway-wide). Resolves with the function that gives it back, or with
   * the error result's text when none came free; rejects when `signal` aborts.
   */
  slot(parentKey: string, signal: AbortSignal): Promise<(() => void) | string> {
    return this.places.take(parentKey, signal);
  }

  /**
   * Starts one child; `done` settles when it has ended, however it ended
   * (the child's own failures are the result's `outcome`, never a rejection).
   */
  start(request: ChildRequest, releaseSlot: () => void = () => {}): { id: string; childKey: string; done: Promise<ChildResult> } {
    const id = this.host.ids();
    const childKey = childSessionKey(request.parentKey, id);
    return { id, childKey, done: this.execute(id, childKey, request, releaseSlot) };
  }

  private async execute(id: string, childKey: string, request: ChildRequest, releaseSlot: () => void): Promise<ChildResult> {
    const { host } = this;
    const started = host.clock.now();
    const child: RunningChild = {
      id,
      childKey,
      parentKey: request.parentKey,
      agentId: request.agent.id,
      label: request.label,
      depth: depth(childKey),
      startedAt: started,
    };
    const ownStop = new AbortController();
    const cancelTimer = host.timer(this.limits.timeout_ms, () => ownStop.abort(new ChildTimeout(`timed out after ${this.limits.timeout_ms} ms`)));
    const joined = joinSignals([request.signal, ownStop.signal]);
    const signal = joined.signal;
    const user = rootKey(request.parentKey);
    const notice = { id, label: request.label, agent: request.agent.id };

    let outcome: ChildOutcome = "error";
    let reply: string | undefined;
    let error: string | undefined;
    this.running.set(childKey, child);
    // What both of the child's events say of it.
    const scope = { agentId: request.agent.id, sessionKey: childKey, ...request.parentCall, parentKey: request.parentKey, childKey, label: request.label };
    try {
      host.events.emit("subagent.start", scope);
      host.notify(user, "subagent.start", notice);
      reply = await host.runTurn(request.agent, childKey, childMessage(request), signal);
      outcome = "done";
    } catch (caught) {
      const timedOut = ownStop.signal.aborted && ownStop.signal.reason instanceof ChildTimeout;
      outcome = timedOut ? "timeout" : signal.aborted ? "aborted" : "error";
      error = timedOut ? `timed out after ${this.limits.timeout_ms} ms (agents.defaults.subturn.timeout_ms)` : messageOf(caught);
    } finally {
      cancelTimer();
      joined.dispose();
      this.running.delete(childKey);
      await this.release(childKey);
      const durationMs = host.clock.now() - started;
      host.events.emit("subagent.end", { ...scope, outcome, durationMs });
      host.notify(user, "subagent.end", { ...notice, outcome, durationMs });
      // Last: the next child may start only once this one has visibly ended.
      releaseSlot();
    }
    return {
      id,
      childKey,
      agentId: request.agent.id,
      label: request.label,
      outcome,
      ...(reply === undefined ? {} : { reply }),
      ...(error === undefined ? {} : { error }),
      durationMs: host.clock.now() - started,
    };
  }

  /** Children running below a session (its children, theirs, ...), oldest first. */
  below(sessionKey: string): RunningChild[] {
    const prefix = `${sessionKey}:subagent:`;
    return [...this.running.values()].filter((c) => c.childKey.startsWith(prefix));
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Drops the child's per-session state everywhere, and its history unless kept. */
  private async release(childKey: string): Promise<void> {
    const { history, logger } = this.host;
    try {
      if (this.settings.keepHistory) await trimHistory(history, childKey);
      else await history.clear(childKey);
      await this.host.releaseSession(childKey);
    } catch (caught) {
      logger.error(`releasing ${childKey} failed: ${messageOf(caught)}`);
    }
  }
}

/** The child's first (and only) user message: a line of context, then the task with its lines intact. */
function childMessage(request: ChildRequest): string {
  return `[A task from agent "${request.parentAgent.id}". Your final answer goes back to it, not to the user.]\n\n${request.task}`;
}

async function trimHistory(history: FeatureHistory, key: string): Promise<void> {
  const messages = await history.get(key);
  if (messages.length <= MAX_CHILD_HISTORY) return;
  let kept: ChatMessage[] = messages.slice(-MAX_CHILD_HISTORY);
  while (kept[0]?.role === "tool") kept = kept.slice(1);
  await history.replace(key, kept);
}
