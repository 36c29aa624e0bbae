import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode } from "../errors.js";

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
  config_invalid: 500,
  listen_failed: 500,
  aborted: 503,
  turn_timeout: 504,
  sessions_locked: 500,
  storage_failed: 500,
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
