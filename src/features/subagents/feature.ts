import { BUILT_IN_ORIGIN, type Feature, type FeatureHost, type FeatureParts } from "../../port/feature.js";
import { answerInBackground } from "./background.js";
import { subagentsCommand } from "./command.js";
import "./events.js";
import { SpawnedChildren } from "./spawned.js";
import { Subturns } from "./subturns.js";
import { createSubagentTools } from "./tools.js";

/** The subagents feature's parts, kept for the composition root and tests. */
export interface SubagentFeature extends Feature {
  /** The running children, once set up. */
  readonly subturns: Subturns | undefined;
}

/**
 * Subagents: the `subagent`, `spawn` and `delegate` tools, each running a
 * child turn (`subturns.ts`), `/subagents`, the `subagent.start` /
 * `subagent.end` events and notices, and the parent's answer to a spawned
 * child's result (which `/clear` of the parent's session voids).
 */
export function subagentFeature(): SubagentFeature {
  let subturns: Subturns | undefined;
  return {
    name: "subagents",
    get subturns() {
      return subturns;
    },
    setup(host: FeatureHost): FeatureParts {
      const children = new Subturns(host);
      const spawned = new SpawnedChildren();
      subturns = children;
      host.events.on("subagent.end", (e) => {
        host.logger.info("subagent", { agent: e.agentId, parent: e.parentKey, child: e.childKey, label: e.label, outcome: e.outcome, ms: e.durationMs });
      });
      const made = createSubagentTools({
        subturns: children,
        spawned,
        agents: host.agents,
        deliverReplies: host.config.tools.subagent.deliver,
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
      };
    },
  };
}
