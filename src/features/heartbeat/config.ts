import { z } from "zod";

/** `heartbeat` (top level): PicoClaw's periodic check of HEARTBEAT.md, off by default. */
export const heartbeatSection = z
  .strictObject({
    enabled: z
      .boolean()
      .default(false)
      .describe("Every interval_minutes, read HEARTBEAT.md of the agent's workspace and, when it holds a task, run a turn on it."),
    interval_minutes: z.int().min(1).max(10_080).default(30).describe("Minutes between two checks (at least 1)."),
    agent: z.string().min(1).optional().describe("The agent whose workspace and model it uses (default agents.default)."),
    deliver_to: z
      .string()
      .regex(/^[a-z0-9_-]{1,32}:[A-Za-z0-9._~@+=-]{1,128}$/, 'expected "<channel>:<chat id>", e.g. "telegram:123456789"')
      .optional()
      .describe(
        'Where its answer goes: a chat, "<channel name>:<chat id>" (a channel_list entry\'s name, "telegram" by default). Without it, only the heartbeat session\'s history and events keep it.',
      ),
  })
  .prefault({});

export type HeartbeatSection = z.output<typeof heartbeatSection>;

type Json = Record<string, unknown>;

/** PicoClaw's `heartbeat: {enabled, interval}` as ours: `interval` is minutes (0 is 30; 1 to 4 are 5, as PicoClaw reads them). */
export function heartbeatFromPicoclaw(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const { interval, ...rest } = raw as Json;
  if (interval === undefined || "interval_minutes" in rest) return rest;
  const minutes = typeof interval === "number" ? (interval <= 0 ? 30 : Math.max(5, interval)) : interval;
  return { ...rest, interval_minutes: minutes };
}
