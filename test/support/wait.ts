import type { Timer } from "../../src/signals.js";

/**
 * Waiting in tests for what happens in its own time (a process, a socket,
 * an event of the runtime), always with a name:
 *
 * - `waitFor(what, condition)`: checks `condition` until it holds.
 * - `within(what, promise)`: the promise's outcome, once it has one.
 * - `eventually(check)`: retries an assertion until it passes.
 *
 * Each gives up after WAIT_MS (or `ms`) with a failure that says what never
 * came ("waited 15 s for the model's first request; it got none"), well
 * before vitest's test timeout, which would only say "Test timed out". The
 * deadline only turns a hang into a named failure: it is far more than a
 * busy machine needs, so no outcome depends on the machine's speed. It runs
 * on the real clock even while vitest's fake timers are installed (the real
 * `setTimeout` is taken when this module loads), or on `timer` when given
 * (a test's `ManualTimers`).
 */

/** How long a wait waits: far more than a busy machine needs to start a process or answer on a socket. */
export const WAIT_MS = 15_000;

/** How often `waitFor` and `eventually` check again. */
const EVERY_MS = 10;

export interface WaitOptions {
  /** How long before the wait fails (default WAIT_MS). */
  ms?: number;
  /** The timer the deadline runs on (default: the real one). */
  timer?: Timer;
  /** What there was instead, for the failure's message: "it got 2". */
  instead?: () => string;
}

/** A wait that ran out: its message names what was awaited. */
export class WaitTimeout extends Error {
  override name = "WaitTimeout";
}

const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;

const realTimer: Timer = (ms, fire) => {
  const handle = realSetTimeout(fire, ms);
  return () => realClearTimeout(handle);
};

const EXPIRED = Symbol("expired");

interface Deadline {
  readonly ms: number;
  /** The stack frames of the wait's caller, so that a failure points at the line that waited. */
  readonly callers: string;
  /** Resolves with EXPIRED once the time is up. */
  readonly expired: Promise<typeof EXPIRED>;
  cancel(): void;
}

function deadline(opts: WaitOptions, wait: (...args: never[]) => unknown): Deadline {
  const ms = opts.ms ?? WAIT_MS;
  const trace: { stack?: string } = {};
  Error.captureStackTrace(trace, wait);
  let cancel = () => {};
  const expired = new Promise<typeof EXPIRED>((resolve) => (cancel = (opts.timer ?? realTimer)(ms, () => resolve(EXPIRED))));
  return { ms, callers: trace.stack?.split("\n").slice(1).join("\n") ?? "", expired, cancel: () => cancel() };
}

const nap = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

const seconds = (ms: number) => `${ms / 1000} s`;

function timedOut(what: string, clock: Deadline, opts: WaitOptions): WaitTimeout {
  const failure = new WaitTimeout(`waited ${seconds(clock.ms)} for ${what}${opts.instead ? `; ${opts.instead()}` : ""}`);
  failure.stack = `${failure.name}: ${failure.message}\n${clock.callers}`;
  return failure;
}

/** The outcome of `promise`; fails naming `what` if it has none within the deadline. A rejection is passed on as it is. */
export async function within<T>(what: string, promise: PromiseLike<T>, opts: WaitOptions = {}): Promise<T> {
  const clock = deadline(opts, within);
  try {
    const outcome = await Promise.race([Promise.resolve(promise).then((value) => ({ value })), clock.expired]);
    if (outcome === EXPIRED) throw timedOut(what, clock, opts);
    return outcome.value;
  } finally {
    clock.cancel();
  }
}

/** Resolves once `condition` holds (checked now, then every few milliseconds); fails naming `what` if it never does within the deadline. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, opts: WaitOptions = {}): Promise<void> {
  const clock = deadline(opts, waitFor);
  try {
    for (;;) {
      const met = await Promise.race([Promise.resolve().then(condition), clock.expired]);
      if (met === EXPIRED) throw timedOut(what, clock, opts);
      if (met) return;
      if ((await Promise.race([nap(EVERY_MS), clock.expired])) === EXPIRED) throw timedOut(what, clock, opts);
    }
  } finally {
    clock.cancel();
  }
}

/**
 * Retries `check` until it passes, and returns what it returned; when the
 * deadline comes first, fails with the check's last error (the assertion
 * that still failed, which says what was awaited), saying how long it tried.
 */
export async function eventually<T>(check: () => T | Promise<T>, opts: WaitOptions = {}): Promise<T> {
  const clock = deadline(opts, eventually);
  let last: unknown;
  try {
    for (;;) {
      try {
        const attempt = Promise.resolve().then(check);
        const outcome = await Promise.race([attempt.then((value) => ({ value })), clock.expired]);
        if (outcome === EXPIRED) break;
        return outcome.value;
      } catch (error) {
        last = error;
      }
      if ((await Promise.race([nap(EVERY_MS), clock.expired])) === EXPIRED) break;
    }
  } finally {
    clock.cancel();
  }
  if (last === undefined) throw timedOut("a check to pass", clock, opts);
  if (!(last instanceof Error)) throw timedOut("a check to pass", clock, { instead: () => `it last failed with ${String(last)}`, ...opts });
  last.message = `still failing after ${seconds(clock.ms)}: ${last.message}`;
  throw last;
}
