import { z } from "zod";
import { bootstrap } from "./bootstrap.js";
import type { LoadedConfig } from "./config/load.js";
import { errorText, gatewayCaller } from "./cron-cli.js";
import { messageOf } from "./errors.js";
import type { Logger } from "./log.js";
import { lockHolder } from "./session/jsonl/dir-lock.js";
import { table } from "./text-table.js";
import type { Redact } from "./tools/redact.js";
import path from "node:path";

/**
 * `picoclaw status`: is a gateway running for this config? It asks the
 * config's address (with the config's token) for `GET /v1/status`; when
 * nothing answers there, the session folder's lock (store jsonl) tells
 * whether a process still holds it. Exit 0: running; 1: none answers
 * (or it refused the token); 2: bad usage or config.
 *
 * `picoclaw model`: model_list, each entry's provider and the agents
 * that use it.
 */

export interface StatusIO {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The session store as `GET /v1/status` names it: its type, and store jsonl's folder. */
export function storeOf(loaded: LoadedConfig): { type: string; dir?: string } {
  const type = loaded.config.session.store;
  return type === "jsonl" ? { type, dir: path.resolve(loaded.baseDir, loaded.config.session.dir) } : { type };
}

const statusSchema = z.object({
  status: z.literal("running"),
  version: z.string(),
  node: z.string(),
  pid: z.number(),
  started_at: z.string(),
  uptime_seconds: z.number(),
  agents: z.array(z.string()),
  default_agent: z.string(),
  sessions: z.object({ in_memory: z.number(), running_turns: z.number(), queued_turns: z.number(), waiting_for_people: z.number() }),
  store: z.object({ type: z.string(), dir: z.string().optional() }),
});

export async function statusCommand(loaded: LoadedConfig, io: StatusIO): Promise<number> {
  if (loaded.config.gateway.port === 0) {
    io.stderr("picoclaw: gateway.port is 0 (a free port, chosen at start): give the gateway's port with picoclaw status --port PORT");
    return 2;
  }
  const { base, call } = gatewayCaller(loaded);
  let res: Response;
  try {
    res = await call("GET", "/v1/status");
  } catch (error) {
    io.stdout(`No gateway answers at ${base} (${reasonOf(error)}).`);
    holderNote(loaded, io);
    return 1;
  }
  if (res.status === 401) {
    io.stdout(
      `A gateway answers at ${base} but refuses ${loaded.config.gateway.token ? "this config's token" : "to answer without a token"}: ${await errorText(res)}.`,
    );
    io.stdout("Set gateway.token (or PICOCLAW_GATEWAY_TOKEN) to the token that gateway was started with.");
    return 1;
  }
  const parsed = statusSchema.safeParse(res.ok ? await res.json().catch(() => undefined) : undefined);
  if (!parsed.success) {
    io.stdout(`Something answers at ${base}, but not as a picoclaw gateway's GET /v1/status (HTTP ${res.status}); another program, or an older picoclaw?`);
    return 1;
  }
  const s = parsed.data;
  const agents = s.agents.map((id) => (id === s.default_agent ? `${id} (default)` : id)).join(", ");
  io.stdout(`picoclaw gateway running at ${base}`);
  io.stdout(
    table(
      ["", ""],
      [
        ["version", `${s.version} (node ${s.node}), pid ${s.pid}`],
        ["uptime", `${duration(s.uptime_seconds)} (since ${s.started_at})`],
        ["agents", agents],
        [
          "sessions",
          `${s.sessions.in_memory} in memory, ${s.sessions.running_turns} with a turn running, ${s.sessions.queued_turns} messages queued, ${s.sessions.waiting_for_people} waiting for a person`,
        ],
        ["store", s.store.dir === undefined ? s.store.type : `${s.store.type} ${s.store.dir}`],
      ],
    )
      .split("\n")
      .slice(1)
      .map((line) => `  ${line}`)
      .join("\n"),
  );
  return 0;
}

/** Why the request failed, in a few words. */
function reasonOf(error: unknown): string {
  for (let e: unknown = error; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ECONNREFUSED") return "connection refused";
    if (e instanceof AggregateError && e.errors.length > 0) return reasonOf(e.errors[0]);
    if (e.name === "TimeoutError") return "no answer within 5 s";
    if (code) return code;
  }
  return messageOf(error);
}

/** With store jsonl: whether a process holds the session folder, though nothing answers at the address. */
function holderNote(loaded: LoadedConfig, io: StatusIO): void {
  const store = storeOf(loaded);
  if (store.dir === undefined) return;
  const held = lockHolder(store.dir);
  if (!held) return;
  const { owner, running } = held;
  if (running === false) return;
  io.stdout(
    running
      ? `Process ${owner.pid} (since ${owner.started_at}) holds the session folder ${store.dir}: a gateway on another address, or one still starting.`
      : `Process ${owner.pid} on ${owner.host} holds the session folder ${store.dir} (another machine: not checked from here).`,
  );
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3_600);
  const m = Math.floor((seconds % 3_600) / 60);
  const parts = [d ? `${d}d` : "", h ? `${h}h` : "", m ? `${m}m` : "", `${seconds % 60}s`].filter(Boolean);
  return parts.join(" ");
}

/** `picoclaw model`: every model_list entry, its provider and model, and the agents that use it (their own model, or the default). */
export async function modelList(loaded: LoadedConfig, log: { logger: Logger; redact: Redact }, io: StatusIO): Promise<number> {
  // The agents' models need no running parts: no plugin loaded, no MCP server started, no folder made or taken.
  const { runtime, warnings } = bootstrap(loaded, { logger: log.logger, redact: log.redact, history: "memory", makeWorkspaces: false });
  try {
    for (const warning of warnings) io.stderr(`warning: ${warning}`);
    const users = new Map<string, string[]>();
    for (const agent of runtime.summaries()) users.set(agent.model, [...(users.get(agent.model) ?? []), agent.id]);
    const fallback = loaded.config.agents.defaults.model_name;
    io.stdout(
      table(
        ["MODEL_NAME", "PROVIDER", "MODEL", "AGENTS"],
        loaded.config.model_list.map((entry) => [
          entry.model_name === fallback ? `${entry.model_name} *` : entry.model_name,
          entry.provider,
          entry.model,
          (users.get(entry.model_name) ?? []).join(",") || "-",
        ]),
      ),
    );
    io.stdout(`* agents.defaults.model_name: what an agent without a model of its own uses`);
    return 0;
  } finally {
    await runtime.close(0);
  }
}
