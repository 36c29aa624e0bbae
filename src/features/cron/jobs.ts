import type { FeatureState } from "../../session/feature-state.js";
import type { Schedule } from "./schedule.js";

/**
 * A scheduled job: a message for the agent, run as a turn in the session
 * that made it, on its schedule. Jobs live in the feature's durable state
 * (one entry each, by id), so they survive restarts and several gateways
 * on one store see the same ones; every change is a compare-and-set on the
 * entry's version, so of two that take the same due run, one wins.
 */
export interface Job {
  id: string;
  name: string;
  enabled: boolean;
  schedule: Schedule;
  message: string;
  agentId: string;
  /** The person's (root) session: where it runs and answers. */
  sessionKey: string;
  /** The next due time; undefined when it has none left (a one-shot that ran). */
  nextRunAtMs?: number;
  lastRunAtMs?: number;
  lastStatus?: "ok" | "error" | "skipped";
  lastError?: string;
  createdAtMs: number;
  updatedAtMs: number;
  /** A one-shot: removed once it ran. */
  deleteAfterRun: boolean;
}

export interface StoredJob {
  job: Job;
  version: number;
}

/** The jobs of the state store, each with its version (entries that are not jobs are left alone). */
export async function storedJobs(state: FeatureState): Promise<StoredJob[]> {
  return (await state.list()).flatMap((entry) => (isJob(entry.value) ? [{ job: entry.value, version: entry.version }] : []));
}

function isJob(value: unknown): value is Job {
  const job = value as Partial<Job> | null;
  return !!job && typeof job.id === "string" && typeof job.sessionKey === "string" && typeof job.message === "string" && typeof job.schedule === "object";
}

/** A job as the HTTP API and the tool's `get` show it. */
export function jobJson(job: Job): Record<string, unknown> {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  const schedule =
    job.schedule.kind === "at"
      ? { kind: "at", at: iso(job.schedule.atMs) }
      : job.schedule.kind === "every"
        ? { kind: "every", every_seconds: Math.round(job.schedule.everyMs / 1000) }
        : { kind: "cron", expr: job.schedule.expr, ...(job.schedule.tz ? { tz: job.schedule.tz } : {}) };
  return {
    id: job.id,
    name: job.name,
    enabled: job.enabled,
    schedule,
    message: job.message,
    agent: job.agentId,
    session_key: job.sessionKey,
    next_run_at: iso(job.nextRunAtMs),
    last_run_at: iso(job.lastRunAtMs),
    ...(job.lastStatus ? { last_status: job.lastStatus } : {}),
    ...(job.lastError ? { last_error: job.lastError } : {}),
    created_at: iso(job.createdAtMs),
    updated_at: iso(job.updatedAtMs),
  };
}
