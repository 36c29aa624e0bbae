import type { Timer } from "../../src/signals.js";

/**
 * Waiting in tests without racing the machine's speed.
 *
 * - `ManualTimers`: a `Timer` (src/signals.ts) whose timers run out only when
 *   the test says so, for code that gives up after a time limit
 *   (request_timeout, a subagent's timeout_ms).
 * - `ManualClock`: a clock that moves only when the test moves it.
 *
 * What real processes and sockets do in their own time is waited for with
 * the helpers of wait.ts (`waitFor`, `within`, `eventually`).
 */

export interface ArmedTimer {
  readonly ms: number;
  /** Runs the timer's callback now (once; not after it was cancelled). */
  fire(): void;
  readonly cancelled: boolean;
  readonly fired: boolean;
}

export class ManualTimers {
  /** Every timer started so far, in order. */
  readonly started: ArmedTimer[] = [];

  readonly timer: Timer = (ms, callback) => {
    let cancelled = false;
    let fired = false;
    const armed: ArmedTimer = {
      ms,
      fire: () => {
        if (cancelled || fired) return;
        fired = true;
        callback();
      },
      get cancelled() {
        return cancelled;
      },
      get fired() {
        return fired;
      },
    };
    this.started.push(armed);
    return () => {
      cancelled = true;
    };
  };

  /** Timers started and neither cancelled nor fired (only those of `ms` when given). */
  pending(ms?: number): ArmedTimer[] {
    return this.started.filter((t) => !t.cancelled && !t.fired && (ms === undefined || t.ms === ms));
  }

  /** Runs out every pending timer (only those of `ms` when given); returns how many there were. */
  fireAll(ms?: number): number {
    const due = this.pending(ms);
    for (const t of due) t.fire();
    return due.length;
  }
}

/** A clock that stands still until `advance` moves it. */
export class ManualClock {
  constructor(private ms = 0) {}

  readonly now = (): number => this.ms;

  advance(ms: number): void {
    this.ms += ms;
  }
}
