import type { Context } from "hono";
import { RequestError } from "../errors.js";
import type { Runtime } from "../runtime/runtime.js";

/** Messages a page of history holds when `limit` is not given, and at most. */
export const HISTORY_PAGE = { default: 200, max: 1000 } as const;

/** `?limit=N` checked: an integer from 1 to the page's maximum, or its default when absent. */
export function limitParam(raw: string | undefined, page: { default: number; max: number }): number {
  if (raw === undefined) return page.default;
  const limit = /^[0-9]{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(limit >= 1 && limit <= page.max)) {
    throw new RequestError("invalid_request", `limit: expected an integer from 1 to ${page.max} (got ${JSON.stringify(raw)})`);
  }
  return limit;
}

/**
 * `GET /v1/sessions/<key>/history?limit=N`: the last N messages of the
 * session, newest last, and how many it holds. What one answer serialises is
 * bounded by the page's size and the session's max_history_bytes.
 */
export async function historyPage(c: Context, runtime: Runtime, key: string): Promise<Response> {
  const limit = limitParam(c.req.query("limit"), HISTORY_PAGE);
  const page = await runtime.historyPage(key, limit);
  return c.json({ messages: page.messages, total: page.total });
}
