import type { Context, Hono, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { RequestError } from "../errors.js";
import type { FeatureRoute } from "../port/route.js";
import { parseSessionKey } from "../session/key.js";
import { bearerAuth } from "./auth.js";
import { limitBodies } from "./body-limit.js";
import { jsonBodies } from "./content-type.js";
import { readJson } from "./read-json.js";
import { carriesBody } from "./refusal.js";
import { markEventStream } from "./sse.js";

/** A session key from the URL, checked (its form, not whether the session exists). */
export function sessionKeyParam(raw: string): string {
  if (!parseSessionKey(raw)) {
    throw new RequestError("invalid_session_key", `not a session key: ${JSON.stringify(raw)} (expected agent:<agent>:<channel>:<session>)`);
  }
  return raw;
}

const inApi = (path: string) => path === "/v1" || path.startsWith("/v1/");

/** What a feature route may not be: checked when the gateway is made, naming the route. */
function routeProblem(route: FeatureRoute): string | undefined {
  if (!route.path.startsWith("/")) return "its path must start with /";
  if (inApi(route.path) && route.body === "raw") return "a route under /v1/ takes JSON bodies only; put a raw-body route elsewhere (such as /hooks/<name>)";
  if (inApi(route.path) && route.auth === "none")
    return "every route under /v1/ is behind the gateway's token; put a route that checks its own caller elsewhere";
  return undefined;
}

/**
 * Mounts the routes features contribute. Under `/v1/` the API's own checks
 * (the token, JSON bodies, the size limit) have run already; any other
 * route gets its own: the token unless `auth: "none"`, the size limit,
 * JSON bodies unless `body: "raw"`. A `:key` part is checked as a session
 * key before the handler runs.
 */
export function mountFeatureRoutes(app: Hono, routes: readonly FeatureRoute[], opts: { token: string; maxBodyBytes: number }): void {
  for (const route of routes) {
    const problem = routeProblem(route);
    if (problem) throw new TypeError(`feature route ${route.method} ${route.path}: ${problem}`);
    const checks: MiddlewareHandler[] = inApi(route.path)
      ? []
      : [...(route.auth === "none" ? [] : [bearerAuth(opts.token)]), limitBodies(opts.maxBodyBytes), ...(route.body === "raw" ? [] : [jsonBodies()])];
    app.on(route.method, [route.path], ...checks, async (c: Context) => {
      const params = { ...c.req.param() } as Record<string, string>;
      if (params.key !== undefined) sessionKeyParam(params.key);
      const hasBody = carriesBody(c);
      const raw = route.body === "raw" && hasBody ? new Uint8Array(await c.req.arrayBuffer()) : new Uint8Array();
      const json = route.body !== "raw" && hasBody ? await readJson(c.req.raw) : undefined;
      const answer = await route.handle({
        method: route.method,
        params,
        query: (name) => c.req.query(name),
        header: (name) => c.req.header(name),
        json,
        raw,
        signal: c.req.raw.signal,
      });
      const status = (answer.status ?? 200) as ContentfulStatusCode;
      if ("jsonText" in answer) return c.body(answer.jsonText, status, { "content-type": "application/json" });
      if ("json" in answer) return c.json(answer.json as object, status);
      if (answer.contentType.startsWith("text/event-stream")) markEventStream(c);
      return c.body(typeof answer.body === "string" ? answer.body : (answer.body as Uint8Array<ArrayBuffer>), status, {
        ...answer.headers,
        "content-type": answer.contentType,
      });
    });
  }
}
