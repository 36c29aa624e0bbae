import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { answerInBackground } from "./background.js";
import { subagentsCommand } from "./command.js";
import "./events.js";
import { SpawnedChildren } from "./spawned.js";
import { SUBTURN_CAPABILITIES, Subturns } from "./subturns.js";
import { delegateSection, spawnSection, subagentSection, subturnSection } from "./config.js";
import { createSubagentTools } from "./tools.js";

/** What the subagents feature offers its embedder and tests: the running children. */
export interface SubagentsApi {
  readonly subturns: Subturns;
}

/**
 * Subagents: the `subagent`, `spawn` and `delegate` tools, each running a
 * child turn (`subturns.ts`), `/subagents`, the `subagent.start` /
 * `subagent.end` events and notices, and the parent's answer to a spawned
 * child's result (which `/clear` of the parent's session voids).
 */
export const subagentsFeature = defineFeature({
  name: "subagents",
  needs: [...SUBTURN_CAPABILITIES, "agents", "holdStop", "track", "runBackgroundTurn", "deliverLater"],
  config: {
    tools: { subagent: subagentSection, spawn: spawnSection, delegate: delegateSection },
    sections: { "agents.defaults.subturn": subturnSection },
  },
  setup(host, config) {
    const children = new Subturns(host, { limits: config.sections["agents.defaults.subturn"], keepHistory: config.tools.subagent.keep_history });
    const spawned = new SpawnedChildren();
    host.events.on("subagent.end", (e) => {
      host.logger.info("subagent", { agent: e.agentId, parent: e.parentKey, child: e.childKey, label: e.label, outcome: e.outcome, ms: e.durationMs });
    });
    const made = createSubagentTools({
      subturns: children,
      spawned,
      agents: host.agents,
      deliverReplies: config.tools.subagent.deliver,
      holdStop: (key) => host.holdStop(key),
      announce: (parentKey, parentAgent, result) => answerInBackground(host, parentKey, parentAgent, result),
      track: (work) => host.track(work),
    });
    return {
      tools: made.tools,
      toolFor: made.formFor,
      origin: () => BUILT_IN_ORIGIN,
      commands: [
        subagentsCommand(
          (sessionKey) => children.below(sessionKey),
          () => host.clock.now(),
        ),
      ],
      // /clear stops the session's spawned children and voids their results.
      sessionState: [spawned],
      api: { subturns: children } satisfies SubagentsApi,
    };
  },
});
