import type { Context } from "hono";
import type { Runtime } from "../runtime/runtime.js";
import { limitParam } from "./history-route.js";

/** Sessions a page of the list holds when `limit` is not given, and at most. */
export const SESSION_PAGE = { default: 100, max: 1000 } as const;

/**
 * `GET /v1/sessions?limit=N`: the root sessions with a history (on disk too,
 * with store jsonl), the most recently changed first.
 */
export async function sessionList(c: Context, runtime: Runtime): Promise<Response> {
  const sessions = await runtime.sessions(limitParam(c.req.query("limit"), SESSION_PAGE));
  return c.json({
    sessions: sessions.map((s) => ({ key: s.key, agent: s.agentId, messages: s.messages, updated_at: new Date(s.updatedAt).toISOString() })),
  });
}

/** `DELETE /v1/sessions/<key>`: what `/clear` does (waiting for the session's running turn), durably. */
export async function deleteSession(c: Context, runtime: Runtime, key: string): Promise<Response> {
  await runtime.clearSession(key);
  return c.json({ cleared: true });
}
