import { type ContextOverflow, ModelError, type ModelErrorClass, messageOf } from "../errors.js";
import { BrokenBody } from "./body.js";

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
  const errorClass = classOfStatus(status);
  const overflow = errorClass === "bad_request" ? contextOverflowOf(body) : undefined;
  return new ModelError(errorClass, modelName, `HTTP ${status}${detail ? `: ${detail}` : ""}`, {
    providerStatus: status,
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    ...(overflow ? { contextOverflow: overflow } : {}),
  });
}

/** Codes and types servers give a request longer than the model's context window (OpenAI, llama.cpp). */
const OVERFLOW_CODES = new Set(["context_length_exceeded", "exceed_context_size_error"]);
/** How servers say it in words: OpenAI and vLLM, Anthropic, llama.cpp, Mistral, LM Studio, Ollama, Groq. */
const OVERFLOW_WORDS =
  /maximum context length|context (length|window|size)|context_length|prompt is too long|prompt (has|contains) \d+ tokens|too many tokens|exceeds? the (available |maximum )?context|reduce the length of the messages/i;

/** The first number one of `patterns` finds in `text`. */
function numberIn(text: string, ...patterns: RegExp[]): number | undefined {
  for (const pattern of patterns) {
    const found = pattern.exec(text);
    if (found) return Number(found[1]);
  }
  return undefined;
}

/**
 * Whether an error body (or a reported error's text) says the request was
 * longer than the model's context window, and the numbers it gives: the
 * window and what the request came to, in tokens.
 */
export function contextOverflowOf(body: string): ContextOverflow | undefined {
  let fields: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (parsed && typeof parsed === "object") fields = { ...(parsed as object), ...(parsed.error && typeof parsed.error === "object" ? parsed.error : {}) };
  } catch {
    // a text body: its words are all there is
  }
  const message = providerMessage(body);
  const coded = [fields.code, fields.type].some((value) => typeof value === "string" && OVERFLOW_CODES.has(value));
  if (!coded && !OVERFLOW_WORDS.test(message)) return undefined;
  const limit =
    (typeof fields.n_ctx === "number" ? fields.n_ctx : undefined) ??
    numberIn(
      message,
      /maximum context length is (\d+)/i,
      /> (\d+) maximum/i,
      /(\d+) maximum context length/i,
      /context (?:length|window|size) (?:is|of) (\d+)/i,
    );
  const prompt =
    (typeof fields.n_prompt_tokens === "number" ? fields.n_prompt_tokens : undefined) ??
    numberIn(message, /(\d+) in the messages/i, /resulted in (\d+) tokens/i, /too long: (\d+) tokens/i, /contains (\d+) tokens/i);
  return { ...(limit === undefined ? {} : { limitTokens: limit }), ...(prompt === undefined ? {} : { promptTokens: prompt }) };
}

/** Milliseconds the answer asks us to wait: `retry-after-ms` (OpenAI) first, then `retry-after`. */
export function retryAfterFromHeaders(header: (name: string) => string | undefined, now = Date.now()): number | undefined {
  const ms = Number(header("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  return retryAfterMs(header("retry-after") ?? null, now);
}

/** The message of a ModelError without its `model "<name>": ` prefix. */
export function detailOf(error: ModelError): string {
  const prefix = `model "${error.modelName}": `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** The same error with more said about it (and possibly another model entry named). */
export function restate(error: ModelError, detail: string, modelName = error.modelName): ModelError {
  return new ModelError(error.errorClass, modelName, detail, {
    ...(error.providerStatus === undefined ? {} : { providerStatus: error.providerStatus }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.contextOverflow === undefined ? {} : { contextOverflow: error.contextOverflow }),
    cause: error,
  });
}

export interface TransportContext {
  modelName: string;
  /** Where the request went (its origin is shown, never its path or query). */
  url: string;
  /** Whether request_timeout ran out (the attempt was stopped for it). */
  timedOut: boolean;
  timeoutMs: number;
  secrets: readonly (string | undefined)[];
}

/**
 * Classifies an exception thrown while the request was in flight (the
 * turn's own abort and max_duration are the caller's to say): a ModelError
 * stays as it is; request_timeout becomes `timeout`; anything else from the
 * network is `network`.
 */
export function transportError(error: unknown, ctx: TransportContext): Error {
  if (error instanceof ModelError) return error;
  if (ctx.timedOut) {
    return new ModelError(
      "timeout",
      ctx.modelName,
      `no answer from ${originOf(ctx.url)} within ${ctx.timeoutMs} ms (request_timeout); raise request_timeout for slow or local models`,
    );
  }
  const cause = networkCause(error);
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  const detail = scrub([code, typeof cause?.message === "string" ? cause.message : undefined].filter(Boolean).join(" ") || messageOf(error), ctx.secrets);
  const origin = originOf(ctx.url);
  let what: string;
  if (error instanceof BrokenBody) {
    what = `the connection to ${origin} broke before the answer was complete (${detail})`;
  } else if (code && UNREACHABLE.has(code)) {
    what = `cannot reach ${origin} (${detail}); check api_base and that the server is running`;
  } else {
    what = `the request to ${origin} failed (${detail})`;
  }
  return new ModelError("network", ctx.modelName, what, { cause: error });
}

/**
 * The network's own error, with its code (`ECONNREFUSED`, `UND_ERR_SOCKET`):
 * undici's `request` throws it as it is; `fetch` wraps it in a TypeError
 * ("fetch failed", "terminated" for a body) as its cause.
 */
function networkCause(error: unknown): { code?: unknown; message?: unknown } | undefined {
  const thrown = error instanceof BrokenBody ? error.cause : error;
  const wrapped = thrown instanceof TypeError ? (thrown as { cause?: unknown }).cause : undefined;
  const found = wrapped && typeof wrapped === "object" ? wrapped : thrown;
  return found && typeof found === "object" ? (found as { code?: unknown; message?: unknown }) : undefined;
}

/** Connection errors that mean nothing is listening there (or the name does not resolve). */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Where a request went, without its path or query (which may hold a key). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "the server";
  }
}

/** An error a server reported inside a 200 answer or a stream, classified by its HTTP-like code or type. */
export function reportedError(
  modelName: string,
  error: { message?: unknown; code?: unknown; type?: unknown; status?: unknown } | string,
  secrets: readonly (string | undefined)[],
): ModelError {
  const info = typeof error === "string" ? { message: error } : error;
  const message = typeof info.message === "string" && info.message ? info.message : JSON.stringify(error);
  const status = [info.status, info.code].map(Number).find((n) => Number.isInteger(n) && n >= 400 && n <= 599);
  const errorClass: ModelErrorClass = status !== undefined ? classOfStatus(status) : (classOfErrorType(String(info.type ?? info.code ?? "")) ?? "server");
  const label = typeof info.type === "string" ? `${info.type}: ` : "";
  const overflow = errorClass === "bad_request" ? contextOverflowOf(JSON.stringify({ error: info })) : undefined;
  return new ModelError(errorClass, modelName, `the server reported an error: ${label}${scrub(message, secrets)}`, {
    ...(status === undefined ? {} : { providerStatus: status }),
    ...(overflow ? { contextOverflow: overflow } : {}),
  });
}

/** Error types of the Anthropic API (and OpenAI's `type`/`code` words), as classes. */
export function classOfErrorType(type: string): ModelErrorClass | undefined {
  switch (type) {
    case "authentication_error":
    case "permission_error":
    case "invalid_api_key":
      return "auth";
    case "rate_limit_error":
    case "rate_limit_exceeded":
    case "insufficient_quota":
      return "rate_limit";
    case "overloaded_error":
    case "api_error":
    case "server_error":
      return "server";
    case "timeout_error":
      return "timeout";
    case "invalid_request_error":
    case "not_found_error":
    case "request_too_large":
      return "bad_request";
    default:
      return undefined;
  }
}
