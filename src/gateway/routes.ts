import type { Context, Hono } from "hono";
import { RequestError } from "../errors.js";
import type { FeatureRoute } from "../port/route.js";
import { parseSessionKey } from "../session/key.js";

/** A session key from the URL, checked (its form, not whether the session exists). */
export function sessionKeyParam(raw: string): string {
  if (!parseSessionKey(raw)) {
    throw new RequestError("invalid_session_key", `not a session key: ${JSON.stringify(raw)} (expected agent:<agent>:<channel>:<session>)`);
  }
  return raw;
}

/** Mounts the routes features contribute; a `:key` part is checked as a session key before the handler runs. */
export function mountFeatureRoutes(app: Hono, routes: readonly FeatureRoute[]): void {
  for (const route of routes) {
    app.on(route.method, route.path, async (c: Context) => {
      const params = { ...c.req.param() } as Record<string, string>;
      if (params.key !== undefined) sessionKeyParam(params.key);
      const answer = await route.handle({ params, query: (name) => c.req.query(name), signal: c.req.raw.signal });
      if ("jsonText" in answer) return c.body(answer.jsonText, 200, { "content-type": "application/json" });
      return c.json(answer.json as object);
    });
  }
}
