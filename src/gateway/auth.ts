import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { refuse } from "./refusal.js";

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Constant-time equality of two strings of any length (compares their SHA-256 digests). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Requires `Authorization: Bearer <token>` when a token is configured;
 * lets everything through when it is empty.
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (token === "") return next();
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer[ \t]+(.+)$/i.exec(header.trim());
    if (!match || !safeEqual(match[1]!.trim(), token)) {
      c.header("www-authenticate", 'Bearer realm="picoclaw"');
      return refuse(c, 401, "unauthorized", match ? "wrong bearer token" : "missing Authorization: Bearer <token>");
    }
    return next();
  };
}
