import { HttpError, type Transformer } from "grammy";
import type { Timer } from "../../signals.js";
import { wait } from "../../channels/wait.js";

/**
 * Sending again what Telegram could not take: a 429 (flood control) after
 * the `retry_after` seconds it asks for, a 5xx or a network failure after a
 * backoff of 1 s, 2 s, 4 s. At most MAX_ATTEMPTS attempts; a `retry_after`
 * over MAX_RETRY_AFTER_S gives up at once (the text is dropped and logged,
 * the bot goes on). Only sending is retried here: polling (`getUpdates`,
 * `getMe`) has its own loop, and a "typing" action is not worth waiting for.
 * Waits run on the injected timer, so tests decide when they are over.
 */

export const RETRIED_METHODS: ReadonlySet<string> = new Set(["sendMessage", "editMessageText"]);
export const MAX_ATTEMPTS = 4;
export const MAX_RETRY_AFTER_S = 60;

export const backoffMs = (attempt: number): number => 1000 * 2 ** (attempt - 1);

export interface Retry {
  method: string;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  waitMs: number;
  why: string;
}

export function retryTransformer(timer: Timer, onRetry: (retry: Retry) => void): Transformer {
  return async (prev, method, payload, signal) => {
    if (!RETRIED_METHODS.has(method)) return prev(method, payload, signal);
    for (let attempt = 1; ; attempt++) {
      let waitMs: number;
      let why: string;
      try {
        const result = await prev(method, payload, signal);
        if (result.ok || attempt >= MAX_ATTEMPTS) return result;
        const retryAfter = result.parameters?.retry_after;
        if (result.error_code === 429) {
          if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_S) return result;
          waitMs = retryAfter !== undefined ? retryAfter * 1000 : backoffMs(attempt);
        } else if (result.error_code >= 500) waitMs = backoffMs(attempt);
        else return result;
        why = `${result.error_code}: ${result.description}`;
      } catch (error) {
        if (signal?.aborted || attempt >= MAX_ATTEMPTS || !(error instanceof HttpError)) throw error;
        waitMs = backoffMs(attempt);
        why = "network error";
      }
      onRetry({ method, attempt, waitMs, why });
      await wait(timer, waitMs, signal as AbortSignal | undefined);
    }
  };
}
