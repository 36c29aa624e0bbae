type Croner = typeof import("croner");
let croner: Croner | undefined;
let loading: Promise<Croner> | undefined;

/** Loads the cron expression library (croner) with the first job or cron call, not at start; `nextDue` and `cronProblem` need it. */
export async function loadCron(): Promise<void> {
  croner ??= await (loading ??= import("croner"));
}

function cron(expr: string, tz: string | undefined) {
  if (!croner) throw new Error("the cron library is not loaded: await loadCron() first");
  return new croner.Cron(expr, { timezone: tz ?? "UTC", paused: true });
}

/**
 * When a job runs: once at a time (`at`), every so many milliseconds
 * (`every`, from when it was made), or on a 5-field cron expression in a
 * time zone (`cron`, croner; UTC unless `tz` names one).
 */
export type Schedule = { kind: "at"; atMs: number } | { kind: "every"; everyMs: number; fromMs: number } | { kind: "cron"; expr: string; tz?: string };

/** The first due time after `afterMs` (strictly), or undefined when there is none (a one-shot that is past). */
export function nextDue(schedule: Schedule, afterMs: number): number | undefined {
  switch (schedule.kind) {
    case "at":
      return schedule.atMs > afterMs ? schedule.atMs : undefined;
    case "every": {
      const steps = Math.floor((afterMs - schedule.fromMs) / schedule.everyMs) + 1;
      return schedule.fromMs + Math.max(1, steps) * schedule.everyMs;
    }
    case "cron": {
      const next = cron(schedule.expr, schedule.tz).nextRun(new Date(afterMs));
      return next ? next.getTime() : undefined;
    }
  }
}

/** Why a cron expression or a time zone cannot be used, or undefined when they can. */
export function cronProblem(expr: string, tz: string | undefined): string | undefined {
  if (tz !== undefined) {
    try {
      new Intl.DateTimeFormat("en", { timeZone: tz });
    } catch {
      return `tz: ${JSON.stringify(tz)} is not a time zone (an IANA name, such as "Europe/Berlin" or "UTC")`;
    }
  }
  if (expr.trim().split(/\s+/).length !== 5)
    return `cron_expr: ${JSON.stringify(expr)} is not a 5-field cron expression (minute hour day month weekday, e.g. "0 9 * * *")`;
  try {
    cron(expr, tz).nextRun();
  } catch (error) {
    return `cron_expr: ${JSON.stringify(expr)} is not a cron expression (${error instanceof Error ? error.message : String(error)})`;
  }
  return undefined;
}

/** How `list` shows a schedule, as PicoClaw does: `every 60s`, the expression, or `one-time`. */
export function describeSchedule(schedule: Schedule): string {
  if (schedule.kind === "every") return `every ${Math.round(schedule.everyMs / 1000)}s`;
  if (schedule.kind === "cron") return schedule.tz ? `${schedule.expr} (${schedule.tz})` : schedule.expr;
  return "one-time";
}
