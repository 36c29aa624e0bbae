import type { ChatMessage } from "../models/message.js";
import type { HistoryPage, HistoryStore, SessionInfo } from "./history.js";
import { type SessionCacheOptions, SessionCache } from "./session-cache.js";

/** Histories in memory only (a SessionCache behind the port): an evicted session is forgotten, and all of them end with the process. */
export class MemoryHistoryStore implements HistoryStore {
  private readonly cache: SessionCache;

  constructor(opts: SessionCacheOptions = {}) {
    this.cache = new SessionCache(opts);
  }

  hold(sessionKey: string): Promise<() => void> {
    return this.cache.hold(sessionKey);
  }

  async get(sessionKey: string): Promise<ChatMessage[]> {
    return this.cache.get(sessionKey);
  }

  page(sessionKey: string, limit: number): Promise<HistoryPage> {
    return this.cache.page(sessionKey, limit);
  }

  async append(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    this.cache.append(sessionKey, messages);
  }

  async replace(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    this.cache.replace(sessionKey, messages);
  }

  async clear(sessionKey: string): Promise<void> {
    this.cache.clear(sessionKey);
  }

  async clearBelow(sessionKey: string): Promise<void> {
    this.cache.clearBelow(sessionKey);
  }

  list(limit: number): Promise<SessionInfo[]> {
    return this.cache.list(limit);
  }

  keys(): string[] {
    return this.cache.keys();
  }

  get size(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.bytes;
  }

  async close(): Promise<void> {}
}
