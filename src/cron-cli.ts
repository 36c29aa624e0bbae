import { prepare } from "./bootstrap.js";
import type { LoadedConfig } from "./config/load.js";
import { RequestError } from "./errors.js";
import { cronFeature } from "./features/index.js";
import type { Logger } from "./log.js";
import { CHAT_ID, isTransientKey, parseSessionKey, sessionKeyFor } from "./session/key.js";
import { table } from "./text-table.js";
import type { Redact } from "./tools/redact.js";

/**
 * `picoclaw cron list | add | remove`: the scheduled jobs, through the
 * running gateway's API (`/v1/cron`, with the config's token) when one
 * answers at the config's address, else in the store itself, which only a
 * process that owns the session folder may change: with a gateway running
 * but not answering, the command stops, saying so. The store is opened
 * without starting the schedule (nothing runs from here).
 */

export interface CronCliIO {
  stdout(text: string): void;
  stderr(text: string): void;
}

export interface CronArgs {
  sub: string | undefined;
  /** What follows the subcommand (remove's id). */
  rest: string[];
  session?: string;
  agent?: string;
  message?: string;
  at?: string;
  every?: string;
  cron?: string;
  tz?: string;
}

/** What a gateway that does answer says is wrong (anything else from fetch: nothing answers there). */
export class GatewayAnswer extends Error {}

/** A usage mistake: exit 2 with the usage text. */
export class CronUsageError extends Error {}

type JobJson = { id: string; name: string; enabled: boolean; schedule: Record<string, unknown>; session_key: string; next_run_at: string | null };

interface Jobs {
  list(): Promise<JobJson[]>;
  add(body: Record<string, unknown>): Promise<JobJson>;
  remove(id: string): Promise<boolean>;
  close(): Promise<void>;
}

export async function cronCommand(loaded: LoadedConfig, log: { logger: Logger; redact: Redact }, io: CronCliIO, args: CronArgs): Promise<number> {
  if (!["list", "add", "remove"].includes(args.sub ?? ""))
    throw new CronUsageError(`unknown cron command "${args.sub ?? ""}"; try: picoclaw cron list | add | remove`);
  const body = args.sub === "add" ? addBody(loaded, args) : undefined;
  if (args.sub === "remove" && !args.rest[0]) throw new CronUsageError("cron remove needs the job's id: picoclaw cron remove <id>");
  const jobs = (await viaGateway(loaded)) ?? (await inStore(loaded, log));
  try {
    if (args.sub === "list") {
      const list = await jobs.list();
      if (list.length === 0) io.stdout("No scheduled jobs.");
      else
        io.stdout(
          table(
            ["ID", "NAME", "SCHEDULE", "NEXT RUN", "SESSION"],
            list.map((job) => [job.id, job.name, scheduleText(job), job.enabled ? (job.next_run_at ?? "-") : "disabled", job.session_key]),
          ),
        );
      return 0;
    }
    if (args.sub === "add") {
      const job = await jobs.add(body!);
      io.stdout(`Cron job added: ${job.name} (id: ${job.id}), next run ${job.next_run_at ?? "-"}`);
      return 0;
    }
    const id = args.rest[0]!;
    if (!(await jobs.remove(id))) {
      io.stderr(`picoclaw: there is no scheduled job "${id}"`);
      return 1;
    }
    io.stdout(`Cron job removed: ${id}`);
    return 0;
  } finally {
    await jobs.close();
  }
}

/** `POST /v1/cron`'s body from the options. */
function addBody(loaded: LoadedConfig, args: CronArgs): Record<string, unknown> {
  if (!args.message?.trim()) throw new CronUsageError("cron add needs --message TEXT");
  if (!args.session) throw new CronUsageError("cron add needs --session (a session key such as agent:main:telegram:123, or a web session's name)");
  const key = args.session.includes(":")
    ? args.session
    : CHAT_ID.test(args.session)
      ? sessionKeyFor(args.agent ?? loaded.config.agents.default, "http", args.session)
      : undefined;
  if (!key) throw new CronUsageError(`--session: expected a session key or 1-128 letters, digits and . _ ~ @ + = - (got ${JSON.stringify(args.session)})`);
  const seconds = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^\d{1,9}$/.test(value)) throw new CronUsageError(`--${name}: expected whole seconds (got ${JSON.stringify(value)})`);
    return Number(value);
  };
  const at = seconds("at", args.at);
  const every = seconds("every", args.every);
  return {
    session_key: key,
    message: args.message,
    ...(at === undefined ? {} : { at_seconds: at }),
    ...(every === undefined ? {} : { every_seconds: every }),
    ...(args.cron === undefined ? {} : { cron_expr: args.cron }),
    ...(args.tz === undefined ? {} : { tz: args.tz }),
  };
}

/** Calls of the API of the gateway at the config's address, with its token (each limited to 5 s). */
export function gatewayCaller(loaded: LoadedConfig): { base: string; call: (method: string, path: string, body?: unknown) => Promise<Response> } {
  const { host, port, token } = loaded.config.gateway;
  const where = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const base = `http://${where}:${port}`;
  const call = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${base}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000),
    });
  return { base, call };
}

/** The running gateway's API, or undefined when nothing answers at the config's address. */
async function viaGateway(loaded: LoadedConfig): Promise<Jobs | undefined> {
  const { base, call } = gatewayCaller(loaded);
  try {
    const probe = await call("GET", "/v1/cron");
    if (probe.status === 404) throw new GatewayAnswer("the gateway at that address has no /v1/cron (is cron switched off there?)");
    if (!probe.ok) throw new GatewayAnswer(`the gateway at ${base} answered ${probe.status}: ${await errorText(probe)}`);
    const listed = ((await probe.json()) as { jobs: JobJson[] }).jobs;
    return {
      list: async () => listed,
      add: async (body) => {
        const res = await call("POST", "/v1/cron", body);
        if (!res.ok) throw new RequestError("invalid_request", await errorText(res));
        return ((await res.json()) as { job: JobJson }).job;
      },
      remove: async (id) => {
        const res = await call("DELETE", `/v1/cron/${encodeURIComponent(id)}`);
        if (res.status === 404) return false;
        if (!res.ok) throw new GatewayAnswer(`the gateway answered ${res.status}: ${await errorText(res)}`);
        return true;
      },
      close: async () => {},
    };
  } catch (error) {
    if (error instanceof GatewayAnswer) throw error;
    // Nothing listens there (the connection was refused): the store is ours to open. Anything else is said, not guessed past.
    if (refused(error)) return undefined;
    throw new GatewayAnswer(
      `the gateway at ${base} did not answer as one (${error instanceof Error ? error.message : String(error)}); is it another program on that port?`,
    );
  }
}

/** The store itself (the session folder, taken for this process), with the schedule not started. */
async function inStore(loaded: LoadedConfig, log: { logger: Logger; redact: Redact }): Promise<Jobs> {
  const { runtime } = await prepare(loaded, { logger: log.logger, redact: log.redact, makeWorkspaces: false });
  const api = runtime.featureApi(cronFeature);
  if (!api) {
    await runtime.close(0);
    throw new GatewayAnswer("cron is not installed in this gateway");
  }
  return {
    list: async () => (await api.list()).map((job) => api.toJson(job) as JobJson),
    add: async (body) => {
      const key = String(body.session_key);
      // The route's checks: a conversation's key (no subagent's, no one-message session's), of an agent that exists.
      const parts = parseSessionKey(key);
      if (!parts || parts.subagents.length > 0 || isTransientKey(key)) {
        throw new RequestError("invalid_request", `--session: ${JSON.stringify(key)} is not a conversation's session key (agent:<agent>:<channel>:<chat>)`);
      }
      const agentId = parts.agentId;
      runtime.agent(agentId);
      const job = await api.add({
        sessionKey: key,
        agentId,
        message: String(body.message),
        schedule: body as { at_seconds?: number; every_seconds?: number; cron_expr?: string; tz?: string },
      });
      if (typeof job === "string") throw new RequestError("invalid_request", job);
      return api.toJson(job) as JobJson;
    },
    remove: (id) => api.remove(id),
    close: () => runtime.close(0),
  };
}

/** Whether fetch failed because nothing listens at the address. */
export function refused(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if ((e as NodeJS.ErrnoException).code === "ECONNREFUSED") return true;
    if (e instanceof AggregateError && e.errors.some(refused)) return true;
  }
  return false;
}

export async function errorText(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { error?: { message?: string } };
    return body.error?.message ?? res.statusText;
  } catch {
    return res.statusText;
  }
}

function scheduleText(job: JobJson): string {
  const s = job.schedule;
  if (s.kind === "every") return `every ${s.every_seconds}s`;
  if (s.kind === "cron") return `${s.expr}${s.tz ? ` (${s.tz})` : ""}`;
  return `once at ${s.at}`;
}
