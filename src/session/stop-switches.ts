import { AbortedError } from "../errors.js";

/** A stop switch held by work of a session: its signal aborts on `/stop`. */
export interface HeldStop {
  readonly signal: AbortSignal;
  release(): void;
}

/**
 * The stop switches of root sessions: a port. Work holds its session's
 * switch while it runs; `stop` flips it at once. The in-process
 * implementation is StopSwitches below; a store several gateways share
 * replaces it with one whose `stop` reaches the switch wherever the
 * session's work runs.
 */
export interface StopBoard {
  /** The session's current stop signal, held until `release` is called. */
  hold(sessionKey: string): HeldStop;
  /** Aborts everything holding the session's switch; resolves with whether anything did. */
  stop(sessionKey: string, reason?: string): Promise<boolean>;
  /** Switches held in this process (tests, metrics). */
  readonly size: number;
}

/**
 * One stop switch per root session, shared by everything running for it:
 * its turn, queued turns, every subagent below it and their background
 * turns. `/stop` flips it at once (it never waits for the session lock);
 * work that starts afterwards gets a fresh switch. A switch exists only
 * while something holds it, so idle sessions cost nothing.
 */
export class StopSwitches implements StopBoard {
  private readonly switches = new Map<string, { controller: AbortController; users: number }>();

  /** The session's current stop signal, held until `release` is called. */
  hold(sessionKey: string): HeldStop {
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

  /** Aborts everything holding the session's switch, at once; false when nothing did. */
  async stop(sessionKey: string, reason = "stopped by /stop"): Promise<boolean> {
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
