import type { Command } from "../../port/command.js";
import type { RunningChild } from "./subturns.js";

/** `/subagents`: the session's running subagents. */
export function subagentsCommand(list: (sessionKey: string) => RunningChild[], now: () => number): Command {
  return {
    name: "subagents",
    usage: "/subagents",
    description: "list the subagents running for this session",
    locked: false,
    run: (ctx) => {
      const children = list(ctx.sessionKey);
      if (children.length === 0) return "No subagents are running.";
      return [
        `${children.length} subagent${children.length === 1 ? "" : "s"} running:`,
        ...children.map(
          (c) => `- ${c.label} (${c.id}): agent ${c.agentId}, depth ${c.depth}, running for ${Math.max(0, Math.round((now() - c.startedAt) / 1000))} s`,
        ),
      ].join("\n");
    },
  };
}
