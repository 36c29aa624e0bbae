import type { AgentDefinition } from "../../agents/agent.js";
import { messageOf } from "../../errors.js";
import type { FeatureHost } from "../../port/feature.js";
import { isSubagentKey } from "../../session/key.js";
import type { ChildResult } from "./subturns.js";

/** What answering a background result needs from the runtime. */
export type BackgroundHost = Pick<FeatureHost, "logger" | "runBackgroundTurn" | "deliverLater" | "track">;

/** The message a parent receives when a background child ends. */
export function systemNote(result: ChildResult): string {
  const head = `[System note: background subagent "${result.label}" (id ${result.id}, agent ${result.agentId})`;
  if (result.outcome === "done") return `${head} finished. Its result:]\n\n${result.reply ?? ""}\n\n[Tell the user what they need to know from it.]`;
  return `${head} did not finish.]\n\nOutcome: ${result.outcome}: ${result.error ?? "no reason given"}\n\n[Tell the user, briefly.]`;
}

/**
 * A background (spawned) child ended: its result goes into the parent's
 * session as a system note, in a turn of its own, and the parent's answer
 * reaches the user (an open stream, or the next chat response). If that
 * turn fails, the user still learns the work finished. A child stopped by
 * /stop (or shutdown) wakes nobody: the user asked for quiet, and its end
 * is on the events stream. Only a user's own session is answered.
 */
export function answerInBackground(host: BackgroundHost, parentKey: string, parentAgent: AgentDefinition, result: ChildResult): void {
  if (isSubagentKey(parentKey) || result.outcome === "aborted") return;
  const answered = host.runBackgroundTurn(parentAgent, parentKey, systemNote(result)).catch((error: unknown) => {
    const code = (error as { code?: string }).code;
    if (code === "aborted") return;
    host.logger.warn(`answering the result of subagent ${result.id} in ${parentKey} failed: ${messageOf(error)}`);
    host.deliverLater(parentAgent.id, parentKey, {
      from: "agent",
      text: `Subagent "${result.label}" finished, but I could not answer just now (${code ?? "error"}). Ask me about it.`,
    });
  });
  host.track(answered);
}
