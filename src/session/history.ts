import type { ChatMessage } from "../models/message.js";

/** The end of a session's history, as the history API shows it. */
export interface HistoryPage {
  /** The last messages, oldest first. */
  messages: ChatMessage[];
  /** Messages the session holds in all. */
  total: number;
}

/** A session as the session list shows it. */
export interface SessionInfo {
  key: string;
  /** Messages its history holds. */
  messages: number;
  /** When its history last changed (ms since the epoch). */
  updatedAt: number;
}

/**
 * Where conversations are kept: a port, async end to end, that a store
 * (session/stores.ts, or an embedder's: a database) implements. The runtime
 * holds a session while its turn runs (`hold`); a session nobody holds may
 * be evicted from memory to bound it.
 *
 * `MemoryHistoryStore` keeps histories in memory only, so an evicted session
 * is forgotten. `JsonlHistoryStore` (jsonl/jsonl-store.ts) writes every
 * change through to a file per session and keeps a SessionCache of the
 * sessions used recently: an evicted session is loaded back in `hold` and
 * read from its file by `page`. Changes (`append`, `replace`, `clear`)
 * resolve once they are durable.
 */
export interface HistoryStore {
  /**
   * Keeps the session in memory until the returned function is called: it is
   * never evicted meanwhile. Called before a turn reads the history (a
   * persistent store loads an evicted session back here).
   */
  hold(sessionKey: string): Promise<() => void>;
  /** The session's messages, oldest first (a snapshot: changing it changes nothing). */
  get(sessionKey: string): Promise<ChatMessage[]>;
  /** The last `limit` messages of the session (at least 1), without marking it used. */
  page(sessionKey: string, limit: number): Promise<HistoryPage>;
  /** Adds messages at the end (the runtime appends a whole turn at once); resolves once they are kept for good. */
  append(sessionKey: string, messages: readonly ChatMessage[]): Promise<void>;
  /** Replaces the whole history (a summary took the place of old exchanges). */
  replace(sessionKey: string, messages: readonly ChatMessage[]): Promise<void>;
  /** Forgets the session's history, for good. */
  clear(sessionKey: string): Promise<void>;
  /** Forgets the histories of every session below it (its subagents', kept ones too), for good. */
  clearBelow(sessionKey: string): Promise<void>;
  /** Root sessions (no subagents) with a history, the most recently changed first, at most `limit`. */
  list(limit: number): Promise<SessionInfo[]>;
  /**
   * Whether the session's history outlives the process (a file, a database):
   * a restart finds it again. Absent means never (histories in memory only).
   */
  isDurable?(sessionKey: string): boolean;
  /** Keys of the sessions this process holds a history of in memory (tests, metrics). */
  keys(): string[];
  /** Number of sessions this process holds a history of in memory. */
  readonly size: number;
  /** Bytes of history this process holds in memory: UTF-8 bytes of the messages' JSON. */
  readonly bytes: number;
  /** Ends the store: waits for writes under way and lets go of its files (or connections). */
  close(): Promise<void>;
}
