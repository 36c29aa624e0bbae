import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type ErrorCode, ModelError, PicoclawError, messageOf } from "../errors.js";
import type { Logger } from "../log.js";

/**
 * The one place where the project's error codes become HTTP statuses. Codes
 * the gateway makes itself (auth, limits, routing) are answered where they
 * arise; every domain error goes through `statusOf`.
 */
const STATUS: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_session_key: 400,
  agent_not_found: 404,
  images_not_supported: 400,
  model_not_found: 404,
  not_found: 404,
  conflict: 409,
  state_full: 409,
  tool_not_found: 404,
  tool_locked: 409,
  config_not_written: 409,
  too_many_queued_turns: 429,
  config_invalid: 500,
  listen_failed: 500,
  aborted: 503,
  turn_timeout: 504,
  sessions_locked: 500,
  sessions_unusable: 500,
  storage_failed: 500,
  store_unavailable: 503,
  too_many_streams: 503,
  model_auth: 502,
  model_rate_limit: 502,
  model_timeout: 502,
  model_bad_request: 502,
  model_server: 502,
  model_network: 502,
  model_bad_response: 502,
};

export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS[code];
}

/** The JSON body of every error answer. */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** Routes of the OpenAI-compatible API (and OpenAI's paths this gateway does not serve): their errors are in OpenAI's shape, for the clients made for it. */
export function isOpenAiPath(path: string): boolean {
  return /^\/v1\/(models|responses|chat\/completions|completions|embeddings)(\/|$)/.test(path);
}

/**
 * What tells a client whether trying again can help: `x-should-retry:
 * false` for a failure a retry cannot fix (the model refused the request or
 * the key, a conflict), `retry-after` when the provider said how long to
 * wait. OpenAI's SDKs read both.
 */
export function retryHeaders(error: unknown): Record<string, string> {
  if (error instanceof ModelError) {
    const wait: Record<string, string> = error.retryAfterMs === undefined ? {} : { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) };
    return error.retryable ? wait : { "x-should-retry": "false", ...wait };
  }
  if (error instanceof PicoclawError && ["conflict", "state_full", "tool_locked", "config_not_written"].includes(error.code))
    return { "x-should-retry": "false" };
  return {};
}

/** OpenAI's error body: `{"error":{"message","type","code"}}`, the type from the status as OpenAI words it. */
export function openAiErrorBody(status: number, code: string, message: string): { error: { message: string; type: string; code: string } } {
  const type = status >= 500 ? "server_error" : status === 401 ? "authentication_error" : status === 403 ? "permission_error" : "invalid_request_error";
  return { error: { message, type, code } };
}

/** An error answer, in the shape the route's clients read, with its retry hints. */
export function errorAnswer(c: Context, status: ContentfulStatusCode, code: string, message: string, headers: Record<string, string> = {}): Response {
  const short = shortMessage(message);
  return c.json(isOpenAiPath(c.req.path) ? openAiErrorBody(status, code, short) : errorBody(code, short), status, headers);
}

/** Characters an error's message keeps at most, whatever a route quoted of its input. */
export const MAX_MESSAGE_CHARS = 1_000;

/**
 * An error's message, cut to MAX_MESSAGE_CHARS: the messages quote what was
 * wrong, and a route that quotes a whole value (a 500 KB time zone, a 5,000
 * character id in the path) would otherwise answer with all of it.
 */
export function shortMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  let end = MAX_MESSAGE_CHARS;
  // Not between the two halves of a character outside the BMP.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}… (${message.length - end} more characters)`;
}

/** What a failed request says (`{code, message}` and its status), logged once: a warning at 500 and above, the cause of anything that is not ours. */
export function failureOf(error: unknown, where: string, logger: Logger): { status: ContentfulStatusCode; code: string; message: string } {
  if (error instanceof PicoclawError) {
    const status = statusOf(error.code);
    const message = shortMessage(error.message);
    if (status >= 500) logger.warn(`${shortMessage(where)}: ${message}`, { code: error.code });
    return { status, code: error.code, message };
  }
  logger.error(`${shortMessage(where)} failed: ${shortMessage(messageOf(error))}`);
  return { status: 500, code: "internal", message: "internal error; see the gateway log" };
}
