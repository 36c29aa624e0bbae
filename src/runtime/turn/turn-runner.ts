import type { AgentDefinition } from "../../agents/agent.js";
import type { ToolPolicy } from "../../agents/policy.js";
import type { Config } from "../../config/schema.js";
import { RequestError, messageOf } from "../../errors.js";
import type { DeliveryOrigin, EventBus } from "../../port/events.js";
import type { Clock, Delivery } from "../../port/feature.js";
import type { HistoryStore } from "../../session/history.js";
import { isSubagentKey } from "../../session/key.js";
import type { Timer } from "../../signals.js";
import type { ContextFitter } from "../context/context-provider.js";
import { type ImageInput, checkImages } from "./images.js";
import type { ModelProvider } from "../../models/provider.js";
import type { RequestMemos } from "../../models/request-memo.js";
import type { SystemPrompt } from "./system-prompt.js";
import type { ApprovalGate } from "../../tools/approval.js";
import { type TurnInput, type TurnResult, runTurn } from "./turn.js";
import type { TurnNotes } from "./turn-notes.js";
import type { Work } from "./work.js";

/** Where providers come from (the model catalog, or a fake in tests). */
export interface ModelSource {
  get(modelName: string): ModelProvider;
}

/** What a client adds to a turn (the OpenAI-compatible route): sampling, its own tools, its tools' results. */
export type TurnExtras = Pick<TurnInput, "sampling" | "clientTools" | "toolResults" | "watched">;

/** What a turn needs from the runtime. */
export interface TurnDeps {
  config: Config;
  events: EventBus;
  history: HistoryStore;
  models: ModelSource;
  /** Fits each model call to the model's context window. */
  context: ContextFitter;
  policy: ToolPolicy;
  /** One-turn notes (the user changed the plan, a todo call failed): given to the next turn, then forgotten. */
  notes: TurnNotes;
  work: Work;
  clock: Clock;
  turnTimer: Timer;
  ids: () => string;
  modelNameOf(agent: AgentDefinition): string;
  /** The system prompt of a turn: the agent's, with the features' sections. */
  system: SystemPrompt;
  /** Asks a person before calls of tools under approval `ask` run (the approvals desk). */
  gate?: ApprovalGate;
  /** Each lasting session's last request JSON, for its next turn (session.request_memo_bytes); none when off. */
  memos?: RequestMemos;
}

/**
 * One turn of an agent on a session, with what surrounds the loop: its id
 * and events, the session's history held (never evicted mid-turn), the
 * agent's model (each call fitted to its context window) and tool set (a subagent's without user-only tools), the
 * one-turn note, the turn deadline, and the count of turns running.
 */
export class TurnRunner {
  constructor(private readonly deps: TurnDeps) {}

  /** Throws a 400 when images cannot go to this agent's model: bad ones, too many, or a model without vision. */
  acceptImages(agent: AgentDefinition, images: readonly ImageInput[]): void {
    checkImages(images);
    const modelName = this.deps.modelNameOf(agent);
    if (this.deps.models.get(modelName).vision !== false) return;
    const index = this.deps.config.model_list.findIndex((m) => m.model_name === modelName);
    const entry = this.deps.config.model_list[index];
    const why = entry?.provider === "builtin" ? "the built-in model reads text only" : `model_list[${index}].vision is false`;
    throw new RequestError(
      "images_not_supported",
      `agent "${agent.id}" answers with model "${modelName}", which takes no images (${why}); send the text alone, or give the agent a model with vision`,
    );
  }

  /**
   * `oneTurn`: the session lives for this turn only (a one-message
   * conversation), so it gets the tools a subagent gets: none whose result
   * could arrive after it ended (`spawn`).
   */
  async run(
    agent: AgentDefinition,
    sessionKey: string,
    text: string,
    signal: AbortSignal,
    deliver: (d: Delivery, origin: DeliveryOrigin) => void,
    images: readonly ImageInput[] = [],
    oneTurn = false,
    more: TurnExtras = {},
  ): Promise<TurnResult> {
    const { deps } = this;
    const turnId = deps.ids();
    const started = deps.clock.now();
    const scope = { agentId: agent.id, sessionKey, turnId };
    const ended = deps.work.enter(sessionKey);
    deps.events.emit("turn.start", { ...scope, text });
    const notes = deps.notes.take(agent.id, sessionKey);
    const note = notes.text;
    let release: (() => void) | undefined;
    // A session that lives on (not a one-message conversation, not a subagent's) starts from its last request's JSON.
    const memos = oneTurn || isSubagentKey(sessionKey) ? undefined : deps.memos;
    const memo = memos?.take(sessionKey);
    try {
      // Held while the turn runs: a session in use is never evicted.
      release = await deps.history.hold(sessionKey);
      const result = await runTurn({
        system: (turnSignal) => deps.system.for(agent, sessionKey, turnSignal),
        ...(note === undefined ? {} : { note }),
        turnId,
        agent,
        sessionKey,
        text,
        images,
        ...(more.sampling ? { sampling: more.sampling } : {}),
        ...(more.watched ? { watched: true } : {}),
        ...(more.clientTools?.length ? { clientTools: more.clientTools } : {}),
        ...(more.toolResults?.length ? { toolResults: more.toolResults } : {}),
        signal,
        provider: deps.context.forTurn(deps.models.get(deps.modelNameOf(agent)), deps.modelNameOf(agent), sessionKey),
        tools: deps.policy.toolSet(agent, oneTurn || isSubagentKey(sessionKey)),
        maxIterations: deps.config.agents.defaults.max_tool_iterations,
        maxOutputBytes: deps.config.agents.defaults.max_turn_output_bytes,
        timeoutMs: deps.config.agents.defaults.turn_timeout_ms,
        timer: deps.turnTimer,
        history: deps.history,
        events: deps.events,
        deliver,
        ...(deps.gate ? { gate: deps.gate } : {}),
        ...(memo ? { memo } : {}),
        now: () => deps.clock.now(),
      });
      notes.settle();
      const usage = result.usage ? { usage: result.usage } : {};
      deps.events.emit("turn.end", { ...scope, outcome: result.hitLimit ? "limit" : "done", durationMs: deps.clock.now() - started, ...usage });
      return result;
    } catch (error) {
      deps.events.emit("turn.end", {
        ...scope,
        outcome: signal.aborted ? "aborted" : "error",
        durationMs: deps.clock.now() - started,
        error: messageOf(error),
      });
      throw error;
    } finally {
      if (memo) memos?.keep(sessionKey, memo);
      release?.();
      ended();
    }
  }
}
