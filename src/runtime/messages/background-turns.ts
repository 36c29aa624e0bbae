import { isWithin } from "../../session/key.js";

/**
 * Background turns (a feature's `runBackgroundTurn`) from the moment they
 * are asked for until they end. A clear of their session drops them: one
 * still waiting for the session lock never runs, so nothing asked for
 * before a clear is answered after it. Entries live only as long as their
 * turn, so idle sessions cost nothing.
 */
export class BackgroundTurns {
  private readonly turns = new Set<{ sessionKey: string; controller: AbortController }>();

  /** Registers a turn of `sessionKey`: `signal` aborts when the session is cleared; `done` forgets it. */
  add(sessionKey: string): { signal: AbortSignal; done: () => void } {
    const entry = { sessionKey, controller: new AbortController() };
    this.turns.add(entry);
    return { signal: entry.controller.signal, done: () => this.turns.delete(entry) };
  }

  /** Aborts, with `reason`, every background turn of the session and of the sessions below it. */
  drop(sessionKey: string, reason: Error): void {
    for (const entry of [...this.turns]) {
      if (!isWithin(entry.sessionKey, sessionKey)) continue;
      this.turns.delete(entry);
      entry.controller.abort(reason);
    }
  }
}
