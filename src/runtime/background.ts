import type { AgentDefinition } from "../agents/agent.js";
import { messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import type { EventBus } from "./events.js";
import type { Outbox } from "./outbox.js";
import type { ChildResult } from "./subturns.js";
import type { Delivery } from "./turn.js";

/** What answering a background result needs from the runtime. */
export interface BackgroundHost {
  readonly events: EventBus;
  readonly outbox: Outbox;
  readonly logger: Logger;
  /** Runs a turn of `agent` on the session, queued behind its other turns, stoppable by /stop and shutdown. */
  runQueuedTurn(agent: AgentDefinition, sessionKey: string, text: string, deliver: (d: Delivery) => void): Promise<unknown>;
}

/** The message a parent receives when a background child ends. */
export function systemNote(result: ChildResult): string {
  const head = `[System note: background subagent "${result.label}" (id ${result.id}, agent ${result.agentId})`;
  if (result.outcome === "done") return `${head} finished. Its result:]\n\n${result.reply ?? ""}\n\n[Tell the user what they need to know from it.]`;
  return `${head} did not finish.]\n\nOutcome: ${result.outcome}: ${result.error ?? "no reason given"}\n\n[Tell the user, briefly.]`;
}

/**
 * A background (spawned) child ended: its result goes into the parent's
 * session as a system note, in a turn of its own, and the parent's answer
 * reaches the user through the outbox (an open stream, or the next chat
 * response). If that turn fails, the user still learns the work finished.
 */
export function answerInBackground(host: BackgroundHost, parentKey: string, parentAgent: AgentDefinition, result: ChildResult): Promise<unknown> {
  const deliver = (delivery: Delivery) => {
    host.events.emit("delivery", { agentId: parentAgent.id, sessionKey: parentKey, ...delivery });
    host.outbox.publish(parentKey, { type: "delivery", ...delivery }, true);
  };
  return host.runQueuedTurn(parentAgent, parentKey, systemNote(result), deliver).catch((error: unknown) => {
    const code = (error as { code?: string }).code;
    if (code === "aborted") return;
    host.logger.warn(`answering the result of subagent ${result.id} in ${parentKey} failed: ${messageOf(error)}`);
    deliver({ from: "agent", text: `Subagent "${result.label}" finished, but I could not answer just now (${code ?? "error"}). Ask me about it.` });
  });
}
