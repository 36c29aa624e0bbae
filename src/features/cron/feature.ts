import { z } from "zod";
import { RequestError } from "../../errors.js";
import { isTransientKey, parseSessionKey } from "../../session/key.js";
import { parseReporting, problemsLine } from "../../validation.js";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { cronFromPicoclaw, cronSection, cronToolSection } from "./config.js";
import { MAX_SECONDS, type NewJob, addJob, cronTool } from "./cron-tool.js";
import { type Job, jobJson, storedJobs } from "./jobs.js";
import { CronScheduler } from "./scheduler.js";

/** What the feature offers its embedder and the CLI (`picoclaw cron`): the jobs, as the routes see them. */
export interface CronApi {
  list(): Promise<Job[]>;
  /** The job, or what is wrong with the request (as the tool says it). */
  add(input: NewJob): Promise<Job | string>;
  /** False when there is no such job. */
  remove(id: string): Promise<boolean>;
  /** A job as the HTTP API shows it. */
  toJson(job: Job): Record<string, unknown>;
}

/** `POST /v1/cron`'s body: a job for a session, with the tool's schedule arguments. */
const newJobBody = z.strictObject({
  session_key: z.string(),
  message: z.string().min(1),
  at_seconds: z.int().max(MAX_SECONDS).optional(),
  every_seconds: z.int().max(MAX_SECONDS).optional(),
  cron_expr: z.string().optional(),
  tz: z.string().optional(),
});

/** When a job's run starts, the agent is told which job it is, and when it was due; then the job's message. */
export function runMessage(job: Job, dueMs: number, lateMs: number): string {
  const late = lateMs > 0 ? `, run ${Math.max(1, Math.round(lateMs / 60_000))} min late (the gateway was down)` : "";
  return `[Scheduled job "${job.name}" (id ${job.id}), due ${new Date(dueMs).toISOString()}${late}]\n${job.message}`;
}

/**
 * Scheduled jobs (`cron`, `tools.cron`): PicoClaw's `cron` tool, the jobs in
 * the feature's durable state, a scheduler on the runtime's timer and clock
 * (tests move time), each run a background turn in the session that made
 * the job, so its answer goes where that session lives (a Telegram chat, an
 * HTTP session's event stream and history). `GET /v1/cron` lists every job,
 * `DELETE /v1/cron/<id>` removes one.
 */
export const cronFeature = defineFeature({
  name: "cron",
  needs: ["state", "timer", "clock", "logger", "track", "runBackgroundTurn", "agents", "history"],
  config: {
    tools: { cron: cronToolSection },
    sections: { cron: cronSection },
    fromPicoclaw: { "tools.cron": cronFromPicoclaw },
  },
  setup(host, config) {
    const limits = config.sections.cron;
    const scheduler = new CronScheduler({
      state: host.state,
      timer: host.timer,
      clock: host.clock,
      logger: host.logger,
      track: (work) => host.track(work),
      catchUpMs: limits.catch_up_minutes * 60_000,
      pollMs: limits.poll_seconds * 1000,
      run: async (job, dueMs, lateMs) => {
        const agent = host.agents.get(job.agentId);
        if (!agent) throw new Error(`agent "${job.agentId}" no longer exists`);
        if (lateMs > 0) {
          await host.history.append(job.sessionKey, [
            {
              role: "system",
              content: `Scheduled job "${job.name}" (${job.id}): its run due at ${new Date(dueMs).toISOString()} was missed while the gateway was down; it runs now, ${Math.max(1, Math.round(lateMs / 60_000))} min late.`,
              record: { type: "cron", id: job.id, due: new Date(dueMs).toISOString(), outcome: "late" },
            },
          ]);
        }
        await host.runBackgroundTurn(agent, job.sessionKey, runMessage(job, dueMs, lateMs));
      },
      note: async (job, content, record) => {
        await host.history.append(job.sessionKey, [{ role: "system", content, record: { type: "cron", ...record } }]);
      },
    });
    const api: CronApi = {
      list: async () => sorted((await storedJobs(host.state)).map(({ job }) => job)),
      add: async (input) => {
        const job = await addJob(host.state, limits, host.clock.now(), input);
        if (typeof job !== "string") scheduler.arm();
        return job;
      },
      remove: async (id) => {
        const removed = (await host.state.get(id)) !== undefined && (await host.state.delete(id));
        if (removed) scheduler.arm();
        return removed;
      },
      toJson: jobJson,
    };
    return {
      api,
      origin: () => BUILT_IN_ORIGIN,
      tools: [cronTool({ state: host.state, limits, now: () => host.clock.now(), changed: () => scheduler.arm() })],
      routes: [
        {
          method: "GET",
          path: "/v1/cron",
          handle: async () => ({ json: { jobs: (await api.list()).map(jobJson) } }),
        },
        {
          method: "POST",
          path: "/v1/cron",
          handle: async (request) => {
            const body = parseReporting(newJobBody, request.json);
            if (!body.success) throw new RequestError("invalid_request", problemsLine(body.error));
            const { session_key, message, ...schedule } = body.data;
            const parts = parseSessionKey(session_key);
            if (!parts || parts.subagents.length > 0 || isTransientKey(session_key)) {
              throw new RequestError(
                "invalid_request",
                `session_key: ${JSON.stringify(session_key)} is not a conversation's session key (agent:<agent>:<channel>:<chat>)`,
              );
            }
            if (!host.agents.has(parts.agentId)) throw new RequestError("agent_not_found", `unknown agent "${parts.agentId}"`);
            const job = await api.add({ sessionKey: session_key, agentId: parts.agentId, message, schedule });
            if (typeof job === "string") throw new RequestError("invalid_request", job);
            return { json: { job: jobJson(job) }, status: 201 };
          },
        },
        {
          method: "DELETE",
          path: "/v1/cron/:id",
          handle: async (request) => {
            const id = request.params.id ?? "";
            if (!(await api.remove(id))) throw new RequestError("not_found", `there is no scheduled job ${JSON.stringify(id)}`);
            return { json: { removed: true, id } };
          },
        },
      ],
      start: () => scheduler.start(),
      stop: () => scheduler.stop(),
    };
  },
});

/** Jobs by their next run (those without one last), then by id. */
function sorted(jobs: Job[]): Job[] {
  return jobs.sort((a, b) => (a.nextRunAtMs ?? Number.POSITIVE_INFINITY) - (b.nextRunAtMs ?? Number.POSITIVE_INFINITY) || (a.id < b.id ? -1 : 1));
}
