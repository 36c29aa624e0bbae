/**
 * One error base class for the whole project. Subclasses say whose fault it
 * is: the user's request, the operator's config, the model provider, or us.
 * Each carries a typed code; the gateway alone maps codes to HTTP statuses
 * (`{"error":{"code","message"}}`), and anything that is not a
 * PicoclawError is an internal error.
 */
export type Fault = "user" | "config" | "model" | "system";

/** What a client sent wrong (answered 4xx by the gateway). */
export const REQUEST_ERROR_CODES = [
  "invalid_request",
  "invalid_json",
  "invalid_session_key",
  "agent_not_found",
  "images_not_supported",
  "model_not_found",
  "not_found",
  "conflict",
  "state_full",
  "tool_not_found",
  "tool_locked",
  "config_not_written",
  "too_many_queued_turns",
] as const;
export type RequestErrorCode = (typeof REQUEST_ERROR_CODES)[number];

export type ErrorCode =
  | RequestErrorCode
  | "config_invalid"
  | "listen_failed"
  | "aborted"
  | "turn_timeout"
  | "sessions_locked"
  | "sessions_unusable"
  | "storage_failed"
  | "store_unavailable"
  | "too_many_streams"
  | `model_${ModelErrorClass}`;

export class PicoclawError extends Error {
  readonly code: ErrorCode;
  readonly fault: Fault;

  constructor(message: string, opts: { code: ErrorCode; fault: Fault; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code;
    this.fault = opts.fault;
  }
}

/** A bad request from a client: malformed JSON, a missing field, an unknown agent. */
export class RequestError extends PicoclawError {
  declare readonly code: RequestErrorCode;

  constructor(code: RequestErrorCode, message: string) {
    super(message, { code, fault: "user" });
  }
}

/**
 * The operator's configuration is wrong. `problems` holds one message per
 * problem, each naming the JSON path or the environment variable.
 */
export class ConfigError extends PicoclawError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], cause?: unknown) {
    super(problems.join("\n"), { code: "config_invalid", fault: "config", cause });
    this.problems = problems;
  }
}

export const MODEL_ERROR_CLASSES = ["auth", "rate_limit", "timeout", "bad_request", "server", "network", "bad_response"] as const;
export type ModelErrorClass = (typeof MODEL_ERROR_CLASSES)[number];

/**
 * The provider said the request is longer than the model's context window
 * (a `bad_request`), with the numbers it gave, when it gave them.
 */
export interface ContextOverflow {
  /** The model's window, in tokens. */
  limitTokens?: number;
  /** What the request came to, in tokens. */
  promptTokens?: number;
}

/** A model provider call failed (after any retries): code `model_<class>`. */
export class ModelError extends PicoclawError {
  readonly errorClass: ModelErrorClass;
  readonly modelName: string;
  /** HTTP status the provider answered, when there was one. */
  readonly providerStatus: number | undefined;
  /** Milliseconds the provider asked us to wait (retry-after), when it said. */
  readonly retryAfterMs: number | undefined;
  /** Set when the request was too long for the model's context window: the runtime fits it again (the code stays `model_bad_request`). */
  readonly contextOverflow: ContextOverflow | undefined;

  constructor(
    errorClass: ModelErrorClass,
    modelName: string,
    message: string,
    opts: { providerStatus?: number; retryAfterMs?: number; contextOverflow?: ContextOverflow; cause?: unknown } = {},
  ) {
    super(`model "${modelName}": ${message}`, {
      code: `model_${errorClass}`,
      fault: "model",
      cause: opts.cause,
    });
    this.errorClass = errorClass;
    this.modelName = modelName;
    this.providerStatus = opts.providerStatus;
    this.retryAfterMs = opts.retryAfterMs;
    this.contextOverflow = opts.contextOverflow;
  }

  /** Whether trying again (or trying a fallback model) could help. */
  get retryable(): boolean {
    return this.errorClass === "rate_limit" || this.errorClass === "server" || this.errorClass === "network" || this.errorClass === "timeout";
  }
}

/** The work was stopped: the client went away, `/stop`, or shutdown. */
export class AbortedError extends PicoclawError {
  constructor(message = "the turn was aborted") {
    super(message, { code: "aborted", fault: "system" });
  }
}

/**
 * A turn ran past `agents.defaults.turn_timeout_ms`: it was aborted (its
 * model call and tools with it) and left the history as it was (but for a
 * summary written by agents.defaults.summarize). Not the
 * user's `/stop`: the gateway answers `504 turn_timeout`.
 */
export class TurnTimeoutError extends PicoclawError {
  constructor(readonly timeoutMs: number) {
    super(
      `the turn took longer than ${timeoutMs} ms (agents.defaults.turn_timeout_ms) and was stopped; nothing of it was kept. Ask for less at once, or raise turn_timeout_ms`,
      { code: "turn_timeout", fault: "system" },
    );
  }
}

/** The reason an AbortSignal carries, as an Error (never undefined). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new AbortedError(typeof reason === "string" ? reason : undefined);
}

/** A short, human message for any thrown value. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
