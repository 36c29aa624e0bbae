import type { Logger } from "../../log.js";
import type { EventBus } from "../../port/events.js";

/**
 * The gateway's operational log, made from runtime events: one line per
 * finished turn, per model answer and per failed tool (features log their
 * own events), and per approval asked for and decided. It carries ids, names, outcomes and timings, never message
 * text (that can hold user data).
 */
export function logEvents(events: Pick<EventBus, "on">, logger: Logger): () => void {
  const stops = [
    events.on("turn.end", (e) => {
      const data = { agent: e.agentId, session: e.sessionKey, turn: e.turnId, outcome: e.outcome, ms: e.durationMs };
      if (e.outcome === "error") logger.warn(`turn failed: ${e.error ?? "unknown error"}`, data);
      else logger.info("turn", data);
    }),
    events.on("llm.response", (e) => {
      logger.info("model answered", { agent: e.agentId, turn: e.turnId, model: e.model, tool_calls: e.toolCalls, ms: e.durationMs, ...e.usage });
    }),
    events.on("tool.end", (e) => {
      if (e.isError) logger.info("tool answered an error", { agent: e.agentId, session: e.sessionKey, tool: e.tool, ms: e.durationMs });
    }),
    // Who decided what (never the call's arguments: they can hold user data).
    events.on("approval.requested", (e) => logger.info("approval requested", { agent: e.agentId, session: e.sessionKey, id: e.id, tool: e.tool })),
    events.on("approval.resolved", (e) =>
      logger.info("approval resolved", { agent: e.agentId, session: e.sessionKey, id: e.id, tool: e.tool, decision: e.decision, by: e.by }),
    ),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
