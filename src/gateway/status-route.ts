import type { Context } from "hono";
import type { Runtime } from "../runtime/runtime.js";

/** What the process that runs the gateway says about itself in `GET /v1/status` (the composition root knows it). */
export interface GatewayAbout {
  /** This package's version. */
  version: string;
  /** Node's version (`process.version`). */
  node: string;
  pid: number;
  /** When the gateway started (ms since the epoch). */
  startedAt: number;
  /** The session store: its type (`session.store`) and, for store jsonl, its folder. */
  store: { type: string; dir?: string };
  /** The clock uptime is counted on. */
  now: () => number;
}

/**
 * `GET /v1/status` (behind the token): the running gateway, for `picoclaw
 * status` and for people: its versions, process, uptime, agents, the
 * sessions it holds and its store.
 */
export function statusAnswer(c: Context, runtime: Runtime, about: GatewayAbout): Response {
  const stats = runtime.stats();
  return c.json(
    {
      status: "running",
      version: about.version,
      node: about.node,
      pid: about.pid,
      started_at: new Date(about.startedAt).toISOString(),
      uptime_seconds: Math.max(0, Math.floor((about.now() - about.startedAt) / 1000)),
      agents: runtime.agentIds(),
      default_agent: runtime.defaultAgentId,
      sessions: {
        in_memory: stats.sessions,
        running_turns: stats.runningTurns,
        queued_turns: stats.queuedTurns,
        queued_bytes: stats.queuedBytes,
        waiting_for_people: stats.waitingForPeople,
      },
      store: about.store,
    },
    200,
    { "cache-control": "no-store" },
  );
}
