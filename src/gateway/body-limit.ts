import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { carriesBody, refuse } from "./refusal.js";

/**
 * Bodies over `maxSize` bytes are refused with 413 before they are read.
 * A request without a body passes at once. A body with a Content-Length
 * is judged by the header alone, which is what a client speaking HTTP/1.1
 * almost always sends: nothing of the request is touched but its headers
 * (hono's own middleware asks for the body stream first, which makes a
 * web stream of Node's request for every request). A body without one (chunked, or a request made
 * in-process) goes through hono's middleware, which counts the bytes as
 * they come and stops at the limit.
 */
export function limitBodies(maxSize: number): MiddlewareHandler {
  const tooLarge = `the body is over ${maxSize} bytes`;
  const counted = bodyLimit({ maxSize, onError: (c) => refuse(c, 413, "payload_too_large", tooLarge) });
  return async (c, next) => {
    // No body at all (a GET, a DELETE without one): nothing to count.
    if (!carriesBody(c)) return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number.parseInt(length, 10) > maxSize ? refuse(c, 413, "payload_too_large", tooLarge) : next();
    }
    return counted(c, next);
  };
}
