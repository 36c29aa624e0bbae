import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { refuse } from "./refusal.js";

/** Methods and headers a listed origin's pages may use (what the API needs, nothing more). */
const CORS_METHODS = ["GET", "HEAD", "POST", "DELETE"];
const CORS_HEADERS = ["Authorization", "Content-Type", "X-Session-Id"];
/** How long a browser may remember a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = 600;

/**
 * An origin as browsers send it (`https://app.example.com`, `http://localhost:5173`),
 * normalised; undefined for anything else (a path, credentials, another scheme, `null`).
 */
export function originOf(text: string): string | undefined {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username !== "" || url.password !== "" || url.pathname !== "/" || url.search !== "" || url.hash !== "") return undefined;
  return url.origin;
}

/** The origin a page served by this gateway would have: the request's scheme and its Host. */
function ownOrigin(request: Request): string | undefined {
  const url = new URL(request.url);
  return originOf(`${url.protocol}//${request.headers.get("host") ?? url.host}`);
}

/** What browsers say in `Sec-Fetch-Site` of a request a page of another origin made. */
const FOREIGN_SITES = new Set(["cross-site", "same-site"]);

/**
 * Browsers name the page behind a request in `Origin`. A request without
 * one (curl, SDKs, servers) or from the gateway's own origin goes on; one
 * from a listed origin goes on with CORS headers (a preflight is answered
 * here, before the token is asked for, as browsers send none with it);
 * any other is `403 forbidden_origin` and runs nothing. So is a request
 * without an Origin that the browser marks as made by another site's page
 * (an image or a link to the API: `Sec-Fetch-Site: cross-site`).
 */
export function originGuard(allowedOrigins: readonly string[]): MiddlewareHandler {
  const allowed = new Set(
    allowedOrigins.map((entry) => {
      const origin = originOf(entry);
      if (origin === undefined) throw new TypeError(`allowed origin ${JSON.stringify(entry)} is not an origin (expected scheme://host[:port])`);
      return origin;
    }),
  );
  // Only listed origins reach it, so it echoes the Origin it is given.
  const withCors = cors({ origin: (origin) => origin, allowMethods: CORS_METHODS, allowHeaders: CORS_HEADERS, maxAge: PREFLIGHT_MAX_AGE });
  return async (c, next) => {
    const sent = c.req.header("origin");
    if (sent === undefined) {
      const site = c.req.header("sec-fetch-site")?.trim().toLowerCase();
      if (site === undefined || !FOREIGN_SITES.has(site)) return next();
      return refuse(c, 403, "forbidden_origin", `requests a browser sends for pages of another site (Sec-Fetch-Site: ${site}) are refused`);
    }
    const origin = originOf(sent);
    if (origin !== undefined && allowed.has(origin)) return withCors(c, next);
    if (origin !== undefined && origin === ownOrigin(c.req.raw)) return next();
    return refuse(
      c,
      403,
      "forbidden_origin",
      `requests from pages of ${JSON.stringify(sent.slice(0, 200))} are refused: that origin is not the gateway's own and not in gateway.allowed_origins`,
    );
  };
}
