import type { MiddlewareHandler } from "hono";
import { carriesBody, refuse } from "./refusal.js";

/** `application/json`, with any parameters (`; charset=utf-8`), in any case. */
export function isJsonContentType(header: string | undefined): boolean {
  return (header ?? "").split(";", 1)[0]!.trim().toLowerCase() === "application/json";
}

/**
 * A request with a body must send it as `Content-Type: application/json`;
 * anything else is `415 unsupported_media_type` and runs nothing. A web page
 * can send `text/plain` (or a form) to any address without asking first,
 * but not JSON: this is what keeps a page from driving the API blind.
 */
export function jsonBodies(): MiddlewareHandler {
  return async (c, next) => {
    if (!carriesBody(c)) return next();
    const sent = c.req.header("content-type");
    if (isJsonContentType(sent)) return next();
    const what = sent === undefined || sent.trim() === "" ? "without a Content-Type" : `as Content-Type: ${sent.slice(0, 200)}`;
    return refuse(c, 415, "unsupported_media_type", `the body was sent ${what}; expected Content-Type: application/json`);
  };
}
