import { AbortedError } from "../../errors.js";

/**
 * One stop switch per root session, shared by everything running for it:
 * its turn, queued turns, every subagent below it and their background
 * turns. `/stop` flips it at once (it never waits for the session lock);
 * work that starts afterwards gets a fresh switch. A switch exists only
 * while something holds it, so idle sessions cost nothing.
 */
export class StopSwitches {
  private readonly switches = new Map<string, { controller: AbortController; users: number }>();

  /** The session's current stop signal, held until `release` is called. */
  hold(sessionKey: string): { signal: AbortSignal; release: () => void } {
    let entry = this.switches.get(sessionKey);
    if (!entry) this.switches.set(sessionKey, (entry = { controller: new AbortController(), users: 0 }));
    entry.users++;
    const held = entry;
    let released = false;
    return {
      signal: held.controller.signal,
      release: () => {
        if (released) return;
        released = true;
        if (--held.users === 0 && this.switches.get(sessionKey) === held) this.switches.delete(sessionKey);
      },
    };
  }

  /** Aborts everything holding the session's switch; false when nothing did. */
  stop(sessionKey: string, reason = "stopped by /stop"): boolean {
    const entry = this.switches.get(sessionKey);
    if (!entry) return false;
    this.switches.delete(sessionKey);
    entry.controller.abort(new AbortedError(reason));
    return true;
  }

  get size(): number {
    return this.switches.size;
  }
}
