import type { Context } from "hono";
import { RequestError } from "../errors.js";
import type { Runtime } from "../runtime/runtime.js";

/** Sessions a page of the list holds when `limit` is not given, and at most. */
export const SESSION_PAGE = { default: 100, max: 1000 } as const;

function listLimit(raw: string | undefined): number {
  if (raw === undefined) return SESSION_PAGE.default;
  const limit = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= SESSION_PAGE.max)) {
    throw new RequestError("invalid_request", `limit: expected an integer from 1 to ${SESSION_PAGE.max} (got ${JSON.stringify(raw)})`);
  }
  return limit;
}

/**
 * `GET /v1/sessions?limit=N`: the root sessions with a history (on disk too,
 * with store jsonl), the most recently changed first.
 */
export async function sessionList(c: Context, runtime: Runtime): Promise<Response> {
  const sessions = await runtime.sessions(listLimit(c.req.query("limit")));
  return c.json({
    sessions: sessions.map((s) => ({ key: s.key, agent: s.agentId, messages: s.messages, updated_at: new Date(s.updatedAt).toISOString() })),
  });
}

/** `DELETE /v1/sessions/<key>`: what `/clear` does (waiting for the session's running turn), durably. */
export async function deleteSession(c: Context, runtime: Runtime, key: string): Promise<Response> {
  await runtime.clearSession(key);
  return c.json({ cleared: true });
}
