import { type SessionScoped, SessionState } from "../../session/state.js";

/** One note as it waits: its own object, so a later note with the same text is still a new one. */
interface Note {
  readonly text: string;
}

/** The notes a turn starts with, and how it lets go of them once it ended well. */
export interface TakenNotes {
  /** The notes' texts joined by blank lines, in the order their topics were first noted; undefined when none wait. */
  readonly text: string | undefined;
  /** Forgets the notes this turn was given, unless one was noted again meanwhile (a newer note waits for the next turn). */
  settle(): void;
}

/**
 * System notes for an agent's next turn in a session, one per topic (a
 * later note of a topic replaces the earlier one): the user changed the
 * plan with /todo, a todo call failed. The next turn gets every waiting
 * note, just before its new message; they are not kept in the history, and
 * a turn that ended well forgets them. `/clear` and the end of a sub-turn
 * drop a session's notes. At most one per (agent, session, topic): the
 * topics are the features' own few names.
 */
export class TurnNotes implements SessionScoped {
  private readonly notes = new SessionState<ReadonlyMap<string, Note>>();

  set(agentId: string, sessionKey: string, topic: string, text: string): void {
    const notes = new Map(this.notes.get(agentId, sessionKey));
    notes.set(topic, { text });
    this.notes.set(agentId, sessionKey, notes);
  }

  /** Forgets the waiting note of a topic (a later success made it moot). */
  drop(agentId: string, sessionKey: string, topic: string): void {
    const current = this.notes.get(agentId, sessionKey);
    if (!current?.has(topic)) return;
    const notes = new Map(current);
    notes.delete(topic);
    if (notes.size === 0) this.notes.delete(agentId, sessionKey);
    else this.notes.set(agentId, sessionKey, notes);
  }

  /** The text of a topic's waiting note (tests, and features that look before they note). */
  get(agentId: string, sessionKey: string, topic: string): string | undefined {
    return this.notes.get(agentId, sessionKey)?.get(topic)?.text;
  }

  take(agentId: string, sessionKey: string): TakenNotes {
    const given = this.notes.get(agentId, sessionKey);
    if (!given || given.size === 0) return { text: undefined, settle: () => {} };
    return {
      text: [...given.values()].map((note) => note.text).join("\n\n"),
      settle: () => {
        const now = this.notes.get(agentId, sessionKey);
        if (!now) return;
        const left = new Map([...now].filter(([topic, note]) => given.get(topic) !== note));
        if (left.size === 0) this.notes.delete(agentId, sessionKey);
        else this.notes.set(agentId, sessionKey, left);
      },
    };
  }

  clearSession(sessionKey: string): void {
    this.notes.clearSession(sessionKey);
  }

  /** (agent, session) pairs with a note waiting. */
  get size(): number {
    return this.notes.size;
  }
}
