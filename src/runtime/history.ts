import type { ChatMessage } from "../models/message.js";

/** Where conversations are kept. In memory for now; a persistent store can come later. */
export interface HistoryStore {
  /** The session's messages, oldest first (a snapshot: changing it changes nothing). */
  get(sessionKey: string): ChatMessage[];
  append(sessionKey: string, messages: readonly ChatMessage[]): void;
  clear(sessionKey: string): void;
  /** Number of sessions with a history. */
  readonly size: number;
}

export class MemoryHistoryStore implements HistoryStore {
  private readonly sessions = new Map<string, ChatMessage[]>();

  get(sessionKey: string): ChatMessage[] {
    return [...(this.sessions.get(sessionKey) ?? [])];
  }

  append(sessionKey: string, messages: readonly ChatMessage[]): void {
    if (messages.length === 0) return;
    const list = this.sessions.get(sessionKey);
    const copies = messages.map((m) => structuredClone(m));
    if (list) list.push(...copies);
    else this.sessions.set(sessionKey, copies);
  }

  clear(sessionKey: string): void {
    this.sessions.delete(sessionKey);
  }

  get size(): number {
    return this.sessions.size;
  }
}
