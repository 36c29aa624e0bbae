import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorAnswer } from "./errors.js";
import { nodeResponse } from "./sse.js";

/**
 * Whether a request carries a body: a Content-Length above 0, any
 * Transfer-Encoding, or (a request made in-process, which has neither
 * header) a body stream. Over HTTP a request with neither header has no
 * body, though the node listener gives every request but GET and HEAD a
 * body stream (an empty one for `curl -X DELETE`).
 */
export function carriesBody(c: Context): boolean {
  const request = c.req.raw;
  const length = request.headers.get("content-length");
  if (length !== null) return length.trim() !== "0";
  if (request.headers.has("transfer-encoding")) return true;
  return nodeResponse(c) === undefined && request.body !== null;
}

/**
 * An answer the gateway gives before reading the request's body (a wrong
 * Host, Origin, token, content type; a body over the limit): the error as
 * JSON, and `Connection: close` when a body is on its way, so the server
 * closes the socket after the answer and a keep-alive client sends its next
 * request on a fresh connection instead of after bytes nobody read.
 */
export function refuse(c: Context, status: ContentfulStatusCode, code: string, message: string): Response {
  if (carriesBody(c)) c.header("connection", "close");
  return errorAnswer(c, status, code, message);
}
