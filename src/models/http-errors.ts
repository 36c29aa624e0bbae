import { ModelError, type ModelErrorClass, abortReason, messageOf } from "../errors.js";

/**
 * Turning what went wrong on the wire into a classified ModelError whose
 * message a person can act on and that never contains a secret.
 */

export function classOfStatus(status: number): ModelErrorClass {
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limit";
  if (status === 408) return "timeout";
  if (status >= 500) return "server";
  if (status >= 400) return "bad_request";
  return "bad_response";
}

/** Removes every secret (and a Bearer-looking token) from a text, and bounds its length. */
export function scrub(text: string, secrets: readonly (string | undefined)[], max = 300): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join("***");
  }
  out = out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1***");
  out = out.replace(/\s+/g, " ").trim();
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/** The message a provider put in an error body (OpenAI and Anthropic shapes), else the raw text. */
export function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error && typeof parsed.error.message === "string") return parsed.error.message;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: use the text as it is
  }
  return body;
}

/** Milliseconds from a `retry-after` header (seconds or an HTTP date), if any. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function httpError(modelName: string, status: number, body: string, secrets: readonly (string | undefined)[], retryAfter?: number): ModelError {
  const detail = scrub(providerMessage(body), secrets);
  return new ModelError(classOfStatus(status), modelName, `HTTP ${status}${detail ? `: ${detail}` : ""}`, {
    providerStatus: status,
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
  });
}

/**
 * Classifies an exception thrown while the request was in flight: the turn's
 * own abort is re-thrown as it is; our timeout becomes `timeout`; anything
 * else from fetch is `network`.
 */
export function transportError(
  modelName: string,
  error: unknown,
  turnSignal: AbortSignal,
  timeoutSignal: AbortSignal,
  timeoutMs: number,
  secrets: readonly (string | undefined)[],
): Error {
  if (turnSignal.aborted) return abortReason(turnSignal);
  if (error instanceof ModelError) return error;
  if (timeoutSignal.aborted) return new ModelError("timeout", modelName, `no answer within ${timeoutMs} ms (request_timeout)`);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? messageOf(error);
  return new ModelError("network", modelName, `cannot reach the server: ${scrub(detail, secrets)}`);
}
