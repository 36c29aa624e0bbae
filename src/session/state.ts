import { messageOf } from "../errors.js";

/**
 * Per-session state and its lifecycle. Anything that keeps state per session
 * registers here; `/clear` (reason `clear`) and the end of a sub-turn
 * (reason `release`) then drop that session's entries everywhere at once.
 */

export type ClearReason = "clear" | "release";

export interface SessionScoped {
  clearSession(sessionKey: string, reason: ClearReason): void | Promise<void>;
}

export class SessionLifecycle {
  private readonly owners = new Set<SessionScoped>();

  register(owner: SessionScoped): () => void {
    this.owners.add(owner);
    return () => this.owners.delete(owner);
  }

  /** Clears the session in every owner; one failing owner does not stop the others. */
  async clear(sessionKey: string, reason: ClearReason): Promise<void> {
    const failures: string[] = [];
    for (const owner of this.owners) {
      try {
        await owner.clearSession(sessionKey, reason);
      } catch (error) {
        failures.push(messageOf(error));
      }
    }
    if (failures.length > 0) throw new Error(`clearing ${sessionKey} failed: ${failures.join("; ")}`);
  }
}

/**
 * A map keyed by (agent id, session key) whose entries are dropped when the
 * session is cleared or released. The two parts are kept apart (a map of
 * maps), so no pair of ids can collide.
 */
export class SessionState<T> implements SessionScoped {
  private readonly bySession = new Map<string, Map<string, T>>();
  private count = 0;

  get(agentId: string, sessionKey: string): T | undefined {
    return this.bySession.get(sessionKey)?.get(agentId);
  }

  has(agentId: string, sessionKey: string): boolean {
    return this.bySession.get(sessionKey)?.has(agentId) ?? false;
  }

  set(agentId: string, sessionKey: string, value: T): void {
    let agents = this.bySession.get(sessionKey);
    if (!agents) this.bySession.set(sessionKey, (agents = new Map()));
    if (!agents.has(agentId)) this.count++;
    agents.set(agentId, value);
  }

  delete(agentId: string, sessionKey: string): boolean {
    const agents = this.bySession.get(sessionKey);
    if (!agents?.delete(agentId)) return false;
    this.count--;
    if (agents.size === 0) this.bySession.delete(sessionKey);
    return true;
  }

  clearSession(sessionKey: string): void {
    const agents = this.bySession.get(sessionKey);
    if (!agents) return;
    this.count -= agents.size;
    this.bySession.delete(sessionKey);
  }

  /** Number of (agent, session) entries. */
  get size(): number {
    return this.count;
  }
}
