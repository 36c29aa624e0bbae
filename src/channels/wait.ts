import type { Timer } from "../signals.js";

/** Waits `ms` on `timer` (tests inject one they run out themselves); rejects with the signal's reason when it aborts first. */
export function wait(timer: Timer, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal!.reason);
    };
    const cancel = timer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
