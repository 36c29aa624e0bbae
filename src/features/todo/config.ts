import { z } from "zod";

/** The todo feature's config: `tools.todo` (README, "Configuration"). */

/** The two forms of the todo tool (tools.todo.style, AGENT.md todo_style). */
export const TODO_STYLES = ["list", "phases"] as const;

export const todoSection = z
  .strictObject({
    enabled: z.boolean().default(false),
    max_plans: z.int().min(1).max(1_000_000).default(256).describe("Non-empty todo plans the gateway keeps at once."),
    style: z
      .enum(TODO_STYLES)
      .default("list")
      .describe('"list": PicoClaw\'s read/write tool; "phases": named phases of tasks changed by ops. AGENT.md todo_style overrides it.'),
  })
  .prefault({});
