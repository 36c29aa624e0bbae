import type { ChatMessage } from "../models/message.js";

/** Where conversations are kept. In memory for now; a persistent store can come later. */
export interface HistoryStore {
  /** The session's messages, oldest first (a snapshot: changing it changes nothing). */
  get(sessionKey: string): ChatMessage[];
  append(sessionKey: string, messages: readonly ChatMessage[]): void;
  clear(sessionKey: string): void;
  /** Keys of the sessions with a history. */
  keys(): string[];
  /** Number of sessions with a history. */
  readonly size: number;
}

export const DEFAULT_MAX_HISTORY_MESSAGES = 500;

/**
 * Histories in memory. A session keeps at most `maxMessages` messages: the
 * oldest go first, whole exchanges at a time, so the history always starts
 * with a user message (never with a tool result whose call was dropped).
 */
export class MemoryHistoryStore implements HistoryStore {
  private readonly sessions = new Map<string, ChatMessage[]>();

  constructor(private readonly maxMessages = DEFAULT_MAX_HISTORY_MESSAGES) {}

  get(sessionKey: string): ChatMessage[] {
    return [...(this.sessions.get(sessionKey) ?? [])];
  }

  append(sessionKey: string, messages: readonly ChatMessage[]): void {
    if (messages.length === 0) return;
    let list = this.sessions.get(sessionKey);
    if (!list) this.sessions.set(sessionKey, (list = []));
    list.push(...messages.map((m) => structuredClone(m)));
    if (list.length > this.maxMessages) {
      let start = list.length - this.maxMessages;
      while (start < list.length && list[start]!.role !== "user") start++;
      list.splice(0, start);
    }
  }

  clear(sessionKey: string): void {
    this.sessions.delete(sessionKey);
  }

  keys(): string[] {
    return [...this.sessions.keys()];
  }

  get size(): number {
    return this.sessions.size;
  }
}
