import { messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Clock } from "../../port/feature.js";
import type { FeatureState } from "../../session/feature-state.js";
import type { Timer } from "../../signals.js";
import { type Job, type StoredJob, storedJobs } from "./jobs.js";
import { loadCron, nextDue } from "./schedule.js";

/** A run this late (the timer fired after it was due) says so in its message and the history. */
const LATE_MS = 60_000;

/** The longest one timer waits on a store of this process alone (nothing changes the jobs behind its back). */
const MAX_SLEEP_MS = 60 * 60_000;

/** How often the jobs of a shared store are read again when no `pollMs` is given (cron.poll_seconds' default). */
export const DEFAULT_POLL_MS = 30_000;

export interface SchedulerParts {
  state: FeatureState;
  timer: Timer;
  clock: Clock;
  logger: Logger;
  track(work: Promise<unknown>): void;
  /** Runs one due run of a job (a turn in its session); rejects when it failed. */
  run(job: Job, dueMs: number, lateMs: number): Promise<void>;
  /** Writes what happened to a run nobody saw (missed while the gateway was down) into the job's session's history. */
  note(job: Job, text: string, record: Record<string, unknown>): Promise<void>;
  /** cron.catch_up_minutes, in ms. */
  catchUpMs: number;
  /**
   * cron.poll_seconds, in ms: on a store other gateways share, the longest
   * the timer waits before the jobs are read again, jobs or none, so that
   * those another gateway added or changed are seen (and run here when
   * their gateway is gone).
   */
  pollMs?: number;
}

/**
 * Runs the jobs when they are due: one timer at the earliest due time,
 * armed again whenever the jobs change here. On a store other gateways
 * share, the timer is at most `pollMs` away, jobs or none: the jobs are
 * read again then, so a job another gateway added is seen here too, and
 * run here if that gateway is gone. A due run is
 * first claimed (its job written with the next due time and this run's
 * time, compare-and-set) and then run, so it runs at most once however
 * many gateways or restarts look at it; a gateway killed during the run
 * does not run it again. At start, a run missed while the gateway was down
 * is run once if it is at most catch_up old and skipped otherwise; either
 * way the job's session's history says so.
 */
export class CronScheduler {
  private cancel: (() => void) | undefined;
  private stopped = false;
  /** Jobs whose run goes on now (in this process): the next due run waits for it, never stacks behind it. */
  private readonly running = new Set<string>();
  private ticking: Promise<void> | undefined;

  constructor(private readonly parts: SchedulerParts) {}

  /** Catches up on what was missed, then waits for the next due run. */
  async start(): Promise<void> {
    const now = this.parts.clock.now();
    for (const stored of await storedJobs(this.parts.state)) {
      const { job } = stored;
      // A one-shot whose run was claimed before a crash: it ran (or started to) once, which is all it gets.
      if (job.deleteAfterRun && job.nextRunAtMs === undefined) {
        await this.parts.state.delete(job.id, stored.version);
        continue;
      }
      if (!job.enabled || job.nextRunAtMs === undefined || job.nextRunAtMs > now) continue;
      const late = now - job.nextRunAtMs;
      if (late <= this.parts.catchUpMs) await this.claimAndRun(stored, job.nextRunAtMs, now, late);
      else await this.skip(stored, now, late);
      // (Claimed here, run in the background: start-up does not wait for a turn.)
    }
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
  }

  /** Arms the timer for the earliest due run (after the jobs changed). */
  arm(): void {
    if (this.stopped) return;
    this.cancel?.();
    this.cancel = undefined;
    const armed = storedJobs(this.parts.state).then((jobs) => {
      if (this.stopped) return;
      // A job whose run goes on is armed again when it ends.
      const due = jobs.flatMap(({ job }) => (job.enabled && job.nextRunAtMs !== undefined && !this.running.has(job.id) ? [job.nextRunAtMs] : []));
      // On a shared store the jobs are read again after pollMs, due or not: another gateway may add one, or die holding one.
      const shared = this.parts.state.shared;
      // Nothing to run on a store of this process alone: no timer (a job added here arms it again).
      if (due.length === 0 && !shared) return;
      const longest = shared ? (this.parts.pollMs ?? DEFAULT_POLL_MS) : MAX_SLEEP_MS;
      const wait = due.length === 0 ? longest : Math.min(longest, Math.max(0, Math.min(...due) - this.parts.clock.now()));
      this.cancel?.();
      this.cancel = this.parts.timer(wait, () => this.tick());
    });
    this.parts.track(armed.catch((error: unknown) => this.parts.logger.warn(`cron: the jobs could not be read: ${messageOf(error)}`)));
  }

  /** Runs what is due now, then arms the timer again. */
  private tick(): void {
    if (this.stopped || this.ticking) return;
    const work = (async () => {
      const now = this.parts.clock.now();
      const due = (await storedJobs(this.parts.state)).filter(
        ({ job }) => job.enabled && job.nextRunAtMs !== undefined && job.nextRunAtMs <= now && !this.running.has(job.id),
      );
      // A timer that fired long after its time (a suspended host) follows the catch-up rule as a start does.
      await Promise.all(
        due.map((stored) => {
          const late = now - stored.job.nextRunAtMs!;
          if (late > this.parts.catchUpMs) return this.skip(stored, now, late);
          return this.claimAndRun(stored, stored.job.nextRunAtMs!, now, late >= LATE_MS ? late : 0);
        }),
      );
      // (Each claimed before the timer is armed again; the runs go on in the background.)
    })()
      .catch((error: unknown) => this.parts.logger.warn(`cron: a tick failed: ${messageOf(error)}`))
      .finally(() => {
        this.ticking = undefined;
        this.arm();
      });
    this.ticking = work;
    this.parts.track(work);
  }

  /**
   * Claims one due run (compare-and-set: its job written with the next due
   * time before anything runs) and, when this gateway got it, starts it in
   * the background; resolves once it is claimed (or was not).
   */
  private async claimAndRun(stored: StoredJob, dueMs: number, now: number, lateMs: number): Promise<void> {
    const { job } = stored;
    // The cron library, for the first job on a cron expression (nextDue needs it); other jobs never wait for it.
    if (job.schedule.kind === "cron") await loadCron();
    const claimed: Job = { ...job, nextRunAtMs: nextDue(job.schedule, Math.max(now, dueMs)), lastRunAtMs: dueMs, updatedAtMs: now };
    if ((await this.parts.state.put(job.id, claimed, stored.version)) === undefined) return; // another took it
    this.parts.track(this.runClaimed(claimed, dueMs, lateMs));
  }

  private async runClaimed(claimed: Job, dueMs: number, lateMs: number): Promise<void> {
    const job = claimed;
    this.running.add(job.id);
    let status: Pick<Job, "lastStatus" | "lastError">;
    try {
      await this.parts.run(claimed, dueMs, lateMs);
      status = { lastStatus: "ok" };
    } catch (error) {
      status = { lastStatus: "error", lastError: messageOf(error) };
      this.parts.logger.warn(`cron: job ${job.id} (${job.name}) failed: ${messageOf(error)}`);
    }
    this.running.delete(job.id);
    await this.finish(job.id, status);
    // A run that was due meanwhile waited for this one: it runs now.
    this.arm();
  }

  /** A missed run too old to catch up: passed over, said in the history; a one-shot goes. */
  private async skip(stored: StoredJob, now: number, lateMs: number): Promise<void> {
    const { job } = stored;
    if (job.schedule.kind === "cron") await loadCron();
    const minutes = Math.round(lateMs / 60_000);
    const next = nextDue(job.schedule, now);
    const passed: Job = { ...job, nextRunAtMs: next, lastStatus: "skipped", updatedAtMs: now };
    const written = job.deleteAfterRun
      ? await this.parts.state.delete(job.id, stored.version)
      : (await this.parts.state.put(job.id, passed, stored.version)) !== undefined;
    if (!written) return;
    await this.parts.note(
      job,
      `Scheduled job "${job.name}" (${job.id}): its run due at ${new Date(job.nextRunAtMs!).toISOString()} was missed while the gateway was down, ${minutes} min ago (more than cron.catch_up_minutes), and was skipped${job.deleteAfterRun ? "; the one-time job is gone" : ""}.`,
      { type: "cron", id: job.id, due: new Date(job.nextRunAtMs!).toISOString(), outcome: "skipped" },
    );
  }

  /** Writes a run's outcome; a one-shot that ran is removed. Another change meanwhile (an edit) is read and kept. */
  private async finish(id: string, status: Pick<Job, "lastStatus" | "lastError">): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const entry = await this.parts.state.get(id);
      if (!entry) return; // removed meanwhile
      const job = entry.value as Job;
      if (job.deleteAfterRun && job.nextRunAtMs === undefined) {
        if (await this.parts.state.delete(id, entry.version)) return;
        continue;
      }
      const { lastError: _old, ...rest } = job;
      if ((await this.parts.state.put(id, { ...rest, ...status, updatedAtMs: this.parts.clock.now() }, entry.version)) !== undefined) return;
    }
  }
}
