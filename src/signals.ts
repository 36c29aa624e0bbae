import { setMaxListeners } from "node:events";

/**
 * One signal that aborts when any of its sources does, and lets go of them
 * when disposed. (Node 20's AbortSignal.any keeps an entry on every source
 * for as long as the source lives, so joining a long-lived signal, such as
 * shutdown, once per message would grow memory without end.)
 */
export interface JoinedSignal {
  readonly signal: AbortSignal;
  /** Stops listening to the sources; the joined signal keeps its state. */
  dispose(): void;
}

export function joinSignals(sources: readonly (AbortSignal | undefined)[]): JoinedSignal {
  const present = sources.filter((s): s is AbortSignal => s !== undefined);
  const controller = new AbortController();
  // A signal is joined by everything running under it at once: shutdown and a session's stop
  // switch by every turn, a turn's signal by every call the model asks for (a fan-out of fifty
  // is normal). Each join removes its listener when disposed, so listeners are bounded by
  // what runs, and Node's cap of 10 would only print a warning into the JSON log.
  setMaxListeners(0, controller.signal);
  const aborted = present.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  for (const source of present) setMaxListeners(0, source);
  const listeners = present.map((source) => {
    const listener = () => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener("abort", listener, { once: true });
    return [source, listener] as const;
  });
  const dispose = () => {
    for (const [source, listener] of listeners) source.removeEventListener("abort", listener);
  };
  return { signal: controller.signal, dispose };
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
