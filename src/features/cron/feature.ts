import { RequestError } from "../../errors.js";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { cronFromPicoclaw, cronSection, cronToolSection } from "./config.js";
import { cronTool } from "./cron-tool.js";
import { type Job, jobJson, storedJobs } from "./jobs.js";
import { CronScheduler } from "./scheduler.js";

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
    return {
      origin: () => BUILT_IN_ORIGIN,
      tools: [cronTool({ state: host.state, limits, now: () => host.clock.now(), changed: () => scheduler.arm() })],
      routes: [
        {
          method: "GET",
          path: "/v1/cron",
          handle: async () => {
            const jobs = (await storedJobs(host.state)).map(({ job }) => job);
            jobs.sort((a, b) => (a.nextRunAtMs ?? Number.POSITIVE_INFINITY) - (b.nextRunAtMs ?? Number.POSITIVE_INFINITY) || (a.id < b.id ? -1 : 1));
            return { json: { jobs: jobs.map(jobJson) } };
          },
        },
        {
          method: "DELETE",
          path: "/v1/cron/:id",
          handle: async (request) => {
            const id = request.params.id ?? "";
            const entry = await host.state.get(id);
            if (!entry || !(await host.state.delete(id))) throw new RequestError("not_found", `there is no scheduled job ${JSON.stringify(id)}`);
            scheduler.arm();
            return { json: { removed: true, id } };
          },
        },
      ],
      start: () => scheduler.start(),
      stop: () => scheduler.stop(),
    };
  },
});
