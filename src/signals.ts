import { setMaxListeners } from "node:events";
import { abortReason } from "./errors.js";

/**
 * One signal that aborts when any of its sources does, and lets go of them
 * when disposed. (Node 20's AbortSignal.any keeps an entry on every source
 * for as long as the source lives, so joining a long-lived signal, such as
 * shutdown, once per message would grow memory without end.)
 */
export interface JoinedSignal {
  readonly signal: AbortSignal;
  /** Aborts the joined signal itself (a time limit of the work under it), as a source would. */
  abort(reason: unknown): void;
  /** Stops listening to the sources; the joined signal keeps its state. */
  dispose(): void;
}

/** Sources whose listener cap is already lifted (a long-lived one, such as shutdown, is joined by every message). */
const uncapped = new WeakSet<AbortSignal>();

function uncap(signal: AbortSignal): void {
  if (uncapped.has(signal)) return;
  setMaxListeners(0, signal);
  uncapped.add(signal);
}

export function joinSignals(sources: readonly (AbortSignal | undefined)[]): JoinedSignal {
  const controller = new AbortController();
  // A signal is joined by everything running under it at once: shutdown and a session's stop
  // switch by every turn, a turn's signal by every call the model asks for (a fan-out of fifty
  // is normal). Each join removes its listener when disposed, so listeners are bounded by
  // what runs, and Node's cap of 10 would only print a warning into the JSON log.
  setMaxListeners(0, controller.signal);
  const listeners: [AbortSignal, () => void][] = [];
  const dispose = () => {
    for (const [source, listener] of listeners) source.removeEventListener("abort", listener);
    listeners.length = 0;
  };
  const abort = (reason: unknown) => {
    dispose();
    controller.abort(reason);
  };
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      abort(source.reason);
      break;
    }
    uncap(source);
    const listener = () => abort(source.reason);
    source.addEventListener("abort", listener, { once: true });
    listeners.push([source, listener]);
  }
  return { signal: controller.signal, abort, dispose };
}

/**
 * Starts a one-shot timer that calls `fire` after `ms`; what it returns
 * cancels it. Code that gives up after a time limit takes one as an option,
 * so a test can decide when the time is up instead of racing a real clock.
 */
export type Timer = (ms: number, fire: () => void) => () => void;

/** The real one: `setTimeout`. */
export const realTimer: Timer = (ms, fire) => {
  const handle = setTimeout(fire, ms);
  return () => clearTimeout(handle);
};

/** Resolves as `work` does, or rejects with the signal's reason as soon as it aborts (work that ignores its signal is left behind). */
export function untilAborted<T>(work: Promise<T> | T, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([Promise.resolve(work), aborted]).finally(() => signal.removeEventListener("abort", onAbort!));
}
