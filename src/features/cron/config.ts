import { z } from "zod";

/** `tools.cron`: PicoClaw's switch of the cron tool (its command jobs are not ours: see README, "cron"). */
export const cronToolSection = z.strictObject({ enabled: z.boolean().default(true) }).prefault({});

/** `cron`: the schedule's bounds and what happens to runs missed while the gateway was down. */
export const cronSection = z
  .strictObject({
    catch_up_minutes: z
      .int()
      .min(0)
      .max(10_080)
      .default(60)
      .describe(
        "A run missed while the gateway was down is run once at start when it is at most this old, and skipped otherwise; either way the session's history says so.",
      ),
    poll_seconds: z
      .int()
      .min(1)
      .max(3600)
      .default(30)
      .describe(
        "On a store several gateways share (postgres): the longest the scheduler waits before reading the jobs again, jobs or none, so a job another gateway added (and left behind when it died) runs at most this late.",
      ),
    max_jobs: z.int().min(1).max(100_000).default(1000).describe("Scheduled jobs the gateway keeps at most, all sessions together."),
    max_jobs_per_session: z.int().min(1).max(10_000).default(50).describe("Scheduled jobs one session may have at most."),
  })
  .prefault({});

export type CronSection = z.output<typeof cronSection>;

type Json = Record<string, unknown>;

/** PicoClaw's `tools.cron`: `enabled` is read; `exec_timeout_minutes` and `allow_command` (command jobs, which are not ours) are left out with a note. */
export function cronFromPicoclaw(raw: unknown, notes: string[]): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const out: Json = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(raw as Json)) {
    if (key === "exec_timeout_minutes" || key === "allow_command") ignored.push(key);
    else if (value !== null) out[key] = value;
  }
  if (ignored.length > 0)
    notes.push(
      `tools.cron: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} for PicoClaw's command jobs, which are not here (a job is a message for the agent); ignored`,
    );
  return out;
}
