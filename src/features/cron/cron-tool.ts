import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { FeatureState } from "../../session/feature-state.js";
import { isTransientKey, parseSessionKey, rootKey } from "../../session/key.js";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import type { CronSection } from "./config.js";
import { type Job, jobJson, storedJobs } from "./jobs.js";
import { type Schedule, cronProblem, describeSchedule, loadCron, nextDue } from "./schedule.js";

/** The furthest a schedule may reach: ten years, in seconds. */
export const MAX_SECONDS = 10 * 365 * 24 * 3600;

const ACTIONS = ["add", "list", "get", "update", "remove", "enable", "disable"] as const;

const parameters = z.strictObject({
  action: z.enum(ACTIONS).describe("add, list, get, update, remove, enable or disable"),
  name: z.string().optional().describe("update only: a new name (add names the job after its message)"),
  message: z.string().optional().describe("add (required) and update: what the agent is told when the job runs, as a message in this conversation"),
  command: z.string().optional().describe("not available here: a job is a message for the agent"),
  command_confirm: z.boolean().optional(),
  at_seconds: z.int().max(MAX_SECONDS).optional().describe("a one-time run this many seconds from now"),
  every_seconds: z.int().max(MAX_SECONDS).optional().describe("a run every this many seconds (at least 60)"),
  cron_expr: z.string().optional().describe('a 5-field cron expression, e.g. "0 9 * * *" for 9:00 every day'),
  tz: z.string().optional().describe('the time zone of cron_expr, an IANA name such as "Europe/Berlin" (default UTC)'),
  job_id: z.string().optional().describe("get, update, remove, enable, disable: the job's id"),
});

type Args = z.output<typeof parameters>;

/** Seconds an `every` job waits at least between runs. */
export const MIN_EVERY_SECONDS = 60;

export interface CronToolDeps {
  state: FeatureState;
  limits: CronSection;
  now: () => number;
  /** The jobs changed: the scheduler looks again. */
  changed(): void;
}

/** A job's name from its message, as PicoClaw makes it: at most 30 characters (27 and `...`). */
export function nameOf(message: string): string {
  const chars = [...message.replace(/\s+/g, " ").trim()];
  return chars.length <= 30 ? chars.join("") : `${chars.slice(0, 27).join("")}...`;
}

/** The schedule the arguments ask for (PicoClaw's priority: at, then every, then cron; 0 or empty is none), or what is wrong with it. */
function scheduleOf(args: Args, now: number, only: boolean): Schedule | string | undefined {
  const given = [args.at_seconds !== undefined && args.at_seconds > 0, args.every_seconds !== undefined && args.every_seconds > 0, !!args.cron_expr?.trim()];
  if (only && given.filter(Boolean).length > 1) return "only one of at_seconds, every_seconds, or cron_expr can be set";
  if (given[0]) return { kind: "at", atMs: now + args.at_seconds! * 1000 };
  if (given[1]) {
    if (args.every_seconds! < MIN_EVERY_SECONDS) return `every_seconds must be at least ${MIN_EVERY_SECONDS}`;
    return { kind: "every", everyMs: args.every_seconds! * 1000, fromMs: now };
  }
  if (given[2]) {
    const expr = args.cron_expr!.trim().replace(/\s+/g, " ");
    const problem = cronProblem(expr, args.tz);
    if (problem) return problem;
    const schedule: Schedule = { kind: "cron", expr, ...(args.tz ? { tz: args.tz } : {}) };
    if (nextDue(schedule, now) === undefined) return `cron_expr: ${JSON.stringify(expr)} never comes (no date matches it)`;
    return schedule;
  }
  if (args.tz !== undefined) return "tz goes with cron_expr";
  return undefined;
}

/**
 * PicoClaw takes a 0 or a negative at_seconds or every_seconds as not given (and so do we); when that leaves no
 * schedule, the reason is said after PicoClaw's words ("(at_seconds -5: seconds must be more than 0)"), not only
 * that one is missing.
 */
function notPositive(schedule: Pick<Args, "at_seconds" | "every_seconds">): string {
  const ignored = (["at_seconds", "every_seconds"] as const).filter((name) => schedule[name] !== undefined && schedule[name] <= 0);
  return ignored.length === 0 ? "" : ` (${ignored.map((name) => `${name} ${schedule[name]}`).join(" and ")}: seconds must be more than 0)`;
}

/** What a new job needs: who asks, what, and when (the tool's schedule arguments). */
export interface NewJob {
  sessionKey: string;
  agentId: string;
  message: string;
  schedule: Pick<Args, "at_seconds" | "every_seconds" | "cron_expr" | "tz">;
}

/** Adds a job after the checks the tool makes (a schedule, the bounds); the job, or what is wrong (a text the model or the CLI shows). */
export async function addJob(state: FeatureState, limits: CronSection, now: number, input: NewJob): Promise<Job | string> {
  await loadCron();
  const message = input.message.trim();
  if (!message) return "message is required for add";
  const schedule = scheduleOf({ action: "add", ...input.schedule }, now, false);
  if (schedule === undefined) return `one of at_seconds, every_seconds, or cron_expr is required${notPositive(input.schedule)}`;
  if (typeof schedule === "string") return schedule;
  const jobs = await storedJobs(state);
  if (jobs.length >= limits.max_jobs) return `the gateway has ${jobs.length} scheduled jobs, the most it keeps (cron.max_jobs); remove one first`;
  const own = jobs.filter(({ job }) => job.sessionKey === input.sessionKey).length;
  if (own >= limits.max_jobs_per_session) return `this conversation has ${own} scheduled jobs, the most it may (cron.max_jobs_per_session); remove one first`;
  const job: Job = {
    id: randomBytes(8).toString("hex"),
    name: nameOf(message),
    enabled: true,
    schedule,
    message,
    agentId: input.agentId,
    sessionKey: input.sessionKey,
    ...withNext(nextDue(schedule, now)),
    createdAtMs: now,
    updatedAtMs: now,
    deleteAfterRun: schedule.kind === "at",
  };
  await state.put(job.id, job, 0);
  return job;
}

/**
 * PicoClaw's `cron` tool: its actions, parameters and result texts (all
 * silent). A job belongs to the conversation that made it (its root
 * session): it runs there, and only there is it listed, read or changed
 * (another session's id is "not found"). Differences: no command jobs, a
 * cron expression is checked (with its time zone) when it is set, every
 * job is bounded (cron.max_jobs, cron.max_jobs_per_session), an interval
 * is at least a minute.
 */
export function cronTool(deps: CronToolDeps): Tool {
  const { state } = deps;
  const ownJob = async (sessionKey: string, id: string | undefined): Promise<{ error: string } | { job: Job; version: number }> => {
    if (!id?.trim()) return { error: "job_id is required" };
    const entry = await state.get(id.trim());
    const job = entry?.value as Job | undefined;
    if (!entry || !job || job.sessionKey !== sessionKey) return { error: `Job ${id.trim()} not found` };
    return { job, version: entry.version };
  };
  /** Writes a change (compare-and-set; a job changed meanwhile by its run is read again); `next` sets its next due time (none: it has no run left) or KEEP. */
  const change = async (
    sessionKey: string,
    id: string | undefined,
    edit: (job: Job) => Job | string,
    next: number | undefined | typeof KEEP | ((job: Job) => number | undefined | typeof KEEP) = KEEP,
  ): Promise<Job | string> => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await ownJob(sessionKey, id);
      if ("error" in found) return found.error;
      let edited = edit(found.job);
      if (typeof edited === "string") return edited;
      const due = typeof next === "function" ? next(found.job) : next;
      if (due !== KEEP) {
        const { nextRunAtMs: _old, ...rest } = edited;
        edited = { ...rest, ...withNext(due) };
      }
      if ((await state.put(found.job.id, edited, found.version)) !== undefined) {
        deps.changed();
        return edited;
      }
    }
    return `Job ${id} changed while it was being updated; try again`;
  };

  return defineTool({
    name: "cron",
    description:
      "Schedule a message for yourself in this conversation: a reminder or a task to do later, once (at_seconds) or again and again (every_seconds, or cron_expr with tz). When it is due you get its message here and answer as usual. Also list, get, update, remove, enable or disable the jobs of this conversation.",
    parameters,
    enabledByDefault: true,
    execute: async (args, ctx) => {
      await loadCron();
      const sessionKey = rootKey(ctx.sessionKey);
      if (isTransientKey(sessionKey)) return toolResult.error("no session context (channel/chat_id not set). Use this tool in an active conversation.");
      if (args.command?.trim()) {
        return toolResult.error(
          "command jobs are not available here: a scheduled command would run with nobody to approve it. Schedule a message instead; when it runs, you can run the command then (exec asks the user first).",
        );
      }
      const now = deps.now();
      switch (args.action) {
        case "add": {
          // The conversation's own agent runs it (a delegated subagent's job is its user's conversation's).
          const agentId = parseSessionKey(sessionKey)?.agentId ?? ctx.agentId;
          const job = await addJob(state, deps.limits, now, { sessionKey, agentId, message: args.message ?? "", schedule: args });
          if (typeof job === "string") return toolResult.error(job);
          deps.changed();
          return toolResult.silent(`Cron job added: ${job.name} (id: ${job.id})`);
        }
        case "list": {
          const jobs = (await storedJobs(state)).map(({ job }) => job).filter((job) => job.sessionKey === sessionKey && job.enabled);
          if (jobs.length === 0) return toolResult.silent("No scheduled jobs");
          return toolResult.silent(`Scheduled jobs:\n${jobs.map((job) => `- ${job.name} (id: ${job.id}, ${describeSchedule(job.schedule)})`).join("\n")}`);
        }
        case "get": {
          const found = await ownJob(sessionKey, args.job_id);
          if ("error" in found) return toolResult.error(found.error);
          return toolResult.silent(JSON.stringify(jobJson(found.job), null, 2));
        }
        case "update": {
          const name = args.name?.trim();
          const message = args.message?.trim();
          if (args.name !== undefined && !name) return toolResult.error("name must not be empty");
          if (args.message !== undefined && !message) return toolResult.error("message must not be empty");
          const schedule = scheduleOf(args, now, true);
          if (typeof schedule === "string") return toolResult.error(schedule);
          if (!name && !message && !schedule) return toolResult.error("at least one update field is required");
          const updated = await change(
            sessionKey,
            args.job_id,
            (job) => ({
              ...job,
              ...(name ? { name } : {}),
              ...(message ? { message } : {}),
              ...(schedule ? { schedule, deleteAfterRun: schedule.kind === "at" } : {}),
              updatedAtMs: now,
            }),
            schedule ? nextDue(schedule, now) : KEEP,
          );
          if (typeof updated === "string") return toolResult.error(updated);
          return toolResult.silent(`Cron job updated:\n${JSON.stringify(jobJson(updated), null, 2)}`);
        }
        case "remove": {
          const found = await ownJob(sessionKey, args.job_id);
          if ("error" in found) return toolResult.error(found.error);
          await state.delete(found.job.id);
          deps.changed();
          return toolResult.silent(`Cron job removed: ${found.job.id}`);
        }
        case "enable":
        case "disable": {
          const enabled = args.action === "enable";
          const updated = await change(
            sessionKey,
            args.job_id,
            (job) => ({
              ...job,
              enabled,
              updatedAtMs: now,
              // Enabled again: from now on, not the runs it missed while it was off (a past one-shot has none left).
            }),
            (job) => (enabled && !job.enabled ? nextDue(job.schedule, now) : KEEP),
          );
          if (typeof updated === "string") return toolResult.error(updated);
          return toolResult.silent(`Cron job '${updated.name}' ${enabled ? "enabled" : "disabled"}`);
        }
      }
    },
  });
}

/** "Leave the next due time as it is." */
const KEEP = Symbol("keep");

/** `nextRunAtMs` when there is one (an optional field is absent rather than undefined). */
function withNext(next: number | undefined): { nextRunAtMs?: number } {
  return next === undefined ? {} : { nextRunAtMs: next };
}
