import { z } from "zod";
import { toolGate } from "../../config/schema.js";

/** The subagents feature's config: its tools' sections and `agents.defaults.subturn` (README, "Configuration"). */

const int = (min: number, max: number) => z.int().min(min).max(max);

export const subagentSection = z
  .strictObject({
    enabled: z.boolean().default(true),
    deliver: z.boolean().default(false).describe("Show the child's final reply to the user too (subagent and delegate)."),
    keep_history: z.boolean().default(false).describe("Keep a finished child's history (readable via the history API)."),
  })
  .prefault({});

export const spawnSection = toolGate(true);
export const delegateSection = toolGate(true);

/** `agents.defaults.subturn`: the limits of child turns. */
export const subturnSection = z
  .strictObject({
    max_depth: int(1, 16).default(3).describe("How deep subagents may nest."),
    max_concurrent: int(1, 100).default(5).describe("Running children per parent turn."),
    max_running: int(1, 10_000)
      .default(20)
      .describe(
        "Running subagents in the whole gateway (every session, every depth). A child of a user's turn waits for a place up to concurrency_timeout_ms; a child of a subagent gets an error result at once.",
      ),
    timeout_ms: int(1, 86_400_000).default(300_000).describe("Time limit of one child turn, in ms."),
    concurrency_timeout_ms: int(0, 86_400_000)
      .default(30_000)
      .describe("How long a new child waits for a free place (max_concurrent, max_running) before its call fails, in ms."),
  })
  .prefault({});

export type SubturnLimits = z.output<typeof subturnSection>;
