import type { EventBus } from "../../port/events.js";
import { isSubagentKey } from "../../session/key.js";
import type { Notice } from "../../session/subscription.js";

/**
 * A user's session tells its open event streams when each of its turns
 * starts and ends (`turn.start` `{agent, session_key}`, `turn.end`
 * `{agent, session_key, outcome}`), whoever asked for the turn: a UI that
 * watches the session knows when the agent is busy, and learns that a turn
 * ended even when the client that started it went away (its turn aborted).
 * A subagent's turns are not the session's own; their start and end are
 * the subagents feature's notices.
 */
export function announceTurns(events: EventBus, publish: (sessionKey: string, notice: Notice) => void): void {
  events.on("turn.start", (e) => {
    if (isSubagentKey(e.sessionKey)) return;
    publish(e.sessionKey, { type: "notice", event: "turn.start", data: { agent: e.agentId, session_key: e.sessionKey } });
  });
  events.on("turn.end", (e) => {
    if (isSubagentKey(e.sessionKey)) return;
    publish(e.sessionKey, { type: "notice", event: "turn.end", data: { agent: e.agentId, session_key: e.sessionKey, outcome: e.outcome } });
  });
}
