import { setTimeout as delay } from "node:timers/promises";
import { type ModelError, type ModelErrorClass, abortReason } from "../errors.js";

/**
 * When a failed model call is tried again, and after how long. Pure: the
 * randomness (jitter) and the waiting are injected, so tests are instant and
 * deterministic.
 */

export interface RetryPolicy {
  /** Tries after the first one (so at most 1 + maxRetries requests). */
  maxRetries: number;
  /** The first backoff; it doubles on every retry. */
  baseDelayMs: number;
  /** The longest backoff. */
  maxDelayMs: number;
  /** A `retry-after` longer than this is not waited for: the call fails (and a fallback can answer). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 2,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const realSleep: Sleep = async (ms, signal) => {
  try {
    await delay(ms, undefined, { signal });
  } catch (error) {
    throw signal.aborted ? abortReason(signal) : error;
  }
};

/** 429, 5xx and dropped connections can go away by themselves; the rest will fail the same way again. */
const RETRIED: ReadonlySet<ModelErrorClass> = new Set(["rate_limit", "server", "network"]);

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; why?: string };

/**
 * Whether to try again after `error`, `retriesDone` retries into the call.
 * The server's `retry-after` wins over the backoff; otherwise the backoff is
 * `baseDelayMs * 2^retriesDone` (capped), of which a random half is jitter.
 */
export function decideRetry(error: ModelError, retriesDone: number, policy: RetryPolicy, random: () => number): RetryDecision {
  if (!RETRIED.has(error.errorClass)) return { retry: false };
  if (retriesDone >= policy.maxRetries) return { retry: false };
  if (error.retryAfterMs !== undefined) {
    if (error.retryAfterMs > policy.maxRetryAfterMs) {
      return { retry: false, why: `the server asked to wait ${Math.ceil(error.retryAfterMs / 1000)} s, longer than we wait` };
    }
    return { retry: true, delayMs: error.retryAfterMs };
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesDone);
  return { retry: true, delayMs: Math.round(backoff / 2 + (random() * backoff) / 2) };
}
