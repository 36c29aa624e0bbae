import { type ChatMessage, isRecord } from "../models/message.js";
import { type HistoryLimits, fitExchange } from "./exchange.js";
import type { HistoryPage, SessionInfo } from "./history.js";
import { isTransientKey, isWithin } from "./key.js";
import { jsonBytes } from "./size.js";

/** What an append did to the session it went to, beyond adding the messages. */
export interface AppendOutcome {
  /** Messages dropped from the front to stay within the limits. */
  dropped: number;
  /** The newest exchange was over the limits alone and was made to fit: the messages stored are not all those given. */
  fitted: boolean;
}

export interface SessionCacheOptions extends Partial<HistoryLimits> {
  /** Sessions kept at most; past it the least recently used idle one is evicted. */
  maxSessions?: number;
  /** Bytes of history kept at most, all sessions together; past it idle sessions are evicted, least recently used first. */
  maxTotalBytes?: number;
  /** The clock of `updatedAt` (default Date.now). */
  now?: () => number;
}

/** The config's defaults (a test holds them equal). */
export const DEFAULT_HISTORY_LIMITS = {
  maxMessages: 500,
  maxBytes: 4 * 1024 * 1024,
  maxSessions: 10_000,
  maxTotalBytes: 128 * 1024 * 1024,
} as const;

/**
 * A session in memory. Its messages are the store's own copies, never
 * changed in place (a change makes a new array), in an array of exactly
 * their number: thousands of idle sessions keep no spare room. A message's
 * size is measured again when it is dropped, rather than kept for each.
 */
interface Session {
  /** Its key as first given: kept when the session moves to the end of the map, so one string serves every use. */
  key: string;
  messages: ChatMessage[];
  /** jsonBytes of the messages, together. */
  bytes: number;
  updatedAt: number;
}

/**
 * Histories in memory, bounded twice (the memory store's histories, and the
 * JSONL store's cache of the sessions used recently):
 * - per session, by messages and bytes: the oldest exchanges go first,
 *   whole, so a history always starts with a user message; an exchange over
 *   the limits alone is made to fit (`fitExchange`);
 * - across sessions, by count and total bytes: the least recently used
 *   session nobody holds is evicted (forgotten). A held session (its turn is
 *   running) never is; once released, the bounds are enforced again.
 *
 * Messages are stored as copies (`storedCopy`), so a stored text never
 * keeps alive a larger string it was cut from.
 */
export class SessionCache {
  /** In order of last use, least recent first. */
  private readonly sessions = new Map<string, Session>();
  private readonly holds = new Map<string, number>();
  private total = 0;
  private readonly limits: HistoryLimits;
  private readonly maxSessions: number;
  private readonly maxTotalBytes: number;
  private readonly now: () => number;

  constructor(opts: SessionCacheOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.limits = { maxMessages: opts.maxMessages ?? DEFAULT_HISTORY_LIMITS.maxMessages, maxBytes: opts.maxBytes ?? DEFAULT_HISTORY_LIMITS.maxBytes };
    this.maxSessions = opts.maxSessions ?? DEFAULT_HISTORY_LIMITS.maxSessions;
    this.maxTotalBytes = opts.maxTotalBytes ?? DEFAULT_HISTORY_LIMITS.maxTotalBytes;
  }

  async hold(sessionKey: string): Promise<() => void> {
    this.holds.set(sessionKey, (this.holds.get(sessionKey) ?? 0) + 1);
    this.touch(sessionKey);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.holds.get(sessionKey)! - 1;
      if (left === 0) this.holds.delete(sessionKey);
      else this.holds.set(sessionKey, left);
      this.evictIdle();
    };
  }

  get(sessionKey: string): ChatMessage[] {
    return [...(this.sessions.get(sessionKey)?.messages ?? [])];
  }

  async page(sessionKey: string, limit: number): Promise<HistoryPage> {
    const messages = this.sessions.get(sessionKey)?.messages ?? [];
    return { messages: messages.slice(-Math.max(1, limit)), total: messages.length };
  }

  append(sessionKey: string, messages: readonly ChatMessage[]): void {
    this.add(sessionKey, messages);
  }

  /** `append`, saying what it did (the JSONL store writes the same to its file). */
  add(sessionKey: string, messages: readonly ChatMessage[]): AppendOutcome {
    return this.push(sessionKey, messages, true);
  }

  /** Adds the messages (copies of them, or themselves when `copy` is false: objects nobody else holds). */
  private push(sessionKey: string, messages: readonly ChatMessage[], copy: boolean): AppendOutcome {
    if (messages.length === 0) return { dropped: 0, fitted: false };
    const added = copy ? messages.map(storedCopy) : messages.slice();
    const found = this.sessions.get(sessionKey);
    const session = found ?? { key: sessionKey, messages: added, bytes: 0, updatedAt: 0 };
    if (found) {
      session.messages = found.messages.concat(added);
      this.sessions.delete(sessionKey);
    }
    this.sessions.set(session.key, session);
    this.total -= session.bytes;
    session.bytes += bytesOf(added, 0, added.length);
    session.updatedAt = this.now();
    const outcome = this.bound(session);
    this.total += session.bytes;
    if (session.messages.length === 0) this.sessions.delete(sessionKey);
    this.evictIdle();
    return outcome;
  }

  replace(sessionKey: string, messages: readonly ChatMessage[]): void {
    this.clear(sessionKey);
    this.add(sessionKey, messages);
  }

  /**
   * Puts a session read back from its file in memory, as the most recently
   * used, within the limits; `updatedAt` is when it last changed. The
   * messages are kept as they are (just parsed: nobody else holds them).
   */
  restore(sessionKey: string, messages: readonly ChatMessage[], updatedAt: number): AppendOutcome {
    this.clear(sessionKey);
    const outcome = this.push(sessionKey, messages, false);
    const session = this.sessions.get(sessionKey);
    if (session) session.updatedAt = updatedAt;
    return outcome;
  }

  clear(sessionKey: string): void {
    const session = this.sessions.get(sessionKey);
    if (!session) return;
    this.total -= session.bytes;
    this.sessions.delete(sessionKey);
  }

  /** Forgets every session strictly below `sessionKey` (its subagents', at any depth). */
  clearBelow(sessionKey: string): void {
    for (const key of [...this.sessions.keys()]) if (key !== sessionKey && isWithin(key, sessionKey)) this.clear(key);
  }

  has(sessionKey: string): boolean {
    return this.sessions.has(sessionKey);
  }

  /** Messages the session holds in memory. */
  count(sessionKey: string): number {
    return this.sessions.get(sessionKey)?.messages.length ?? 0;
  }

  /** Whether a turn holds the session (it is never evicted meanwhile). */
  isHeld(sessionKey: string): boolean {
    return this.holds.has(sessionKey);
  }

  async list(limit: number): Promise<SessionInfo[]> {
    const infos: SessionInfo[] = [];
    for (const [key, session] of this.sessions) {
      if (!isTransientKey(key)) infos.push({ key, messages: session.messages.length, updatedAt: session.updatedAt });
    }
    return infos.sort((a, b) => b.updatedAt - a.updatedAt).slice(0, Math.max(0, limit));
  }

  keys(): string[] {
    return [...this.sessions.keys()];
  }

  get size(): number {
    return this.sessions.size;
  }

  get bytes(): number {
    return this.total;
  }

  /** Marks a session as the most recently used. */
  private touch(sessionKey: string): void {
    const session = this.sessions.get(sessionKey);
    if (!session) return;
    this.sessions.delete(sessionKey);
    this.sessions.set(session.key, session);
  }

  /** Applies the per-session limits: oldest exchanges first; the last one, if over on its own, is made to fit. */
  private bound(session: Session): AppendOutcome {
    const { maxMessages, maxBytes } = this.limits;
    const { messages } = session;
    // The first index kept: a user message (anything before the first one has no exchange to belong to),
    // or a record before it (who decided on a call, kept before the turn it was made in is).
    let start = messages.findIndex((m) => m.role === "user" || isRecord(m));
    if (start < 0) start = messages.length;
    let count = messages.length - start;
    let bytes = session.bytes - bytesOf(messages, 0, start);
    const last = messages.findLastIndex((m) => m.role === "user");
    while ((count > maxMessages || bytes > maxBytes) && start < last) {
      let next = start + 1;
      while (messages[next]!.role !== "user") next++;
      count -= next - start;
      bytes -= bytesOf(messages, start, next);
      start = next;
    }
    if (start > 0) session.messages = messages.slice(start);
    session.bytes = bytes;
    if (count <= maxMessages && bytes <= maxBytes) return { dropped: start, fitted: false };
    // Only the newest exchange is left, and it is over the limits alone.
    session.messages = fitExchange(session.messages, this.limits).map(storedCopy);
    session.bytes = bytesOf(session.messages, 0, session.messages.length);
    return { dropped: start, fitted: true };
  }

  /** Evicts idle sessions, least recently used first, until the store is within its bounds (held sessions stay). */
  private evictIdle(): void {
    if (this.sessions.size <= this.maxSessions && this.total <= this.maxTotalBytes) return;
    for (const [key, session] of this.sessions) {
      if (this.sessions.size <= this.maxSessions && this.total <= this.maxTotalBytes) return;
      if (this.holds.has(key)) continue;
      this.sessions.delete(key);
      this.total -= session.bytes;
    }
  }
}

/** jsonBytes of `messages[from..to)`, together. */
function bytesOf(messages: readonly ChatMessage[], from: number, to: number): number {
  let total = 0;
  for (let i = from; i < to; i++) total += jsonBytes(messages[i]);
  return total;
}

/** Each role's name, one string for every message kept (a copy of a message would make its own). */
const ROLE_NAMES = new Map<string, ChatMessage["role"]>((["system", "user", "assistant", "tool"] as const).map((role) => [role, role]));

/**
 * The copy of a message that a session keeps: its texts flat strings of
 * their own (never a slice keeping a larger string alive), its role's
 * shared name, and a plain `{ role, content }` (the most common message)
 * with no room for properties it does not have.
 */
function storedCopy(message: ChatMessage): ChatMessage {
  const copy = structuredClone(message);
  const role = ROLE_NAMES.get(copy.role) ?? copy.role;
  const keys = Object.keys(copy);
  if (keys.length === 2 && keys[0] === "role" && keys[1] === "content") return { role, content: copy.content } as ChatMessage;
  copy.role = role;
  return copy;
}
