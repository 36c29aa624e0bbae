import type { OutboxItem, QueueLimits } from "./subscription.js";
import { idAfter } from "./subscription.js";

/**
 * What a session's event streams were sent lately, by event id, so that a
 * client that comes back (`Last-Event-ID`) gets what it missed: its
 * connection went while items were on their way, or another client's
 * stream took a delivery meanwhile. Only sessions a stream was opened for
 * have one (a chat client that never opens a stream costs nothing). It is
 * bounded per session and in all, in items and bytes; the oldest items go
 * first, then the sessions touched longest ago.
 */

export interface ReplayLimits {
  /** What one session's replay holds at most (its newest item is held whatever its size). */
  perSession: QueueLimits;
  /** What every session's replay holds together at most. */
  total: QueueLimits;
  /** Sessions with a replay at most. */
  sessions: number;
}

const KiB = 1024;

/** The replay of the in-process outbox (store memory and jsonl): a reconnecting client gets the last 200 items or 512 KiB of its session. */
export const REPLAY_LIMITS: Readonly<ReplayLimits> = {
  perSession: { maxItems: 200, maxBytes: 512 * KiB },
  total: { maxItems: 5_000, maxBytes: 8 * 1024 * KiB },
  sessions: 1_000,
};

export interface ReplayEntry {
  readonly id: string;
  readonly item: OutboxItem;
  readonly bytes: number;
}

interface Replay {
  entries: ReplayEntry[];
  bytes: number;
}

export class ReplayBuffer {
  /** In the order sessions were last touched, oldest first. */
  private readonly sessions = new Map<string, Replay>();
  private items = 0;
  private bytes = 0;

  constructor(private readonly limits: ReplayLimits = REPLAY_LIMITS) {}

  /** From now on the session's items are held (a stream was opened for it). */
  watch(sessionKey: string): void {
    this.touch(sessionKey);
    this.bound();
  }

  /** Holds an item of a session that is watched; others are not held. */
  record(sessionKey: string, entry: ReplayEntry): void {
    const replay = this.sessions.get(sessionKey);
    if (!replay) return;
    this.touch(sessionKey);
    replay.entries.push(entry);
    replay.bytes += entry.bytes;
    this.items++;
    this.bytes += entry.bytes;
    const { maxItems, maxBytes } = this.limits.perSession;
    while (replay.entries.length > 1 && (replay.entries.length > maxItems || replay.bytes > maxBytes)) this.dropOldest(replay);
    this.bound();
  }

  /** The session's items after event id `after`, oldest first (those still held). */
  since(sessionKey: string, after: string): ReplayEntry[] {
    return (this.sessions.get(sessionKey)?.entries ?? []).filter((entry) => idAfter(entry.id, after));
  }

  /** Forgets the session (/clear). */
  forget(sessionKey: string): void {
    const replay = this.sessions.get(sessionKey);
    if (!replay) return;
    this.items -= replay.entries.length;
    this.bytes -= replay.bytes;
    this.sessions.delete(sessionKey);
  }

  /** Items and bytes held, and sessions watched (tests, metrics). */
  get size(): { items: number; bytes: number; sessions: number } {
    return { items: this.items, bytes: this.bytes, sessions: this.sessions.size };
  }

  private touch(sessionKey: string): void {
    const replay = this.sessions.get(sessionKey) ?? { entries: [], bytes: 0 };
    this.sessions.delete(sessionKey);
    this.sessions.set(sessionKey, replay);
  }

  /** Within the totals: the oldest items of the sessions touched longest ago go first, then those sessions. */
  private bound(): void {
    const { total, sessions } = this.limits;
    while (this.sessions.size > sessions) this.forget(this.sessions.keys().next().value as string);
    for (const [key, replay] of this.sessions) {
      if (this.items <= total.maxItems && this.bytes <= total.maxBytes) return;
      const had = replay.entries.length;
      while (replay.entries.length > 0 && (this.items > total.maxItems || this.bytes > total.maxBytes)) this.dropOldest(replay);
      // A session whose every item went is forgotten; one that held none yet (a stream just opened) stays watched.
      if (had > 0 && replay.entries.length === 0) this.sessions.delete(key);
    }
  }

  private dropOldest(replay: Replay): void {
    const gone = replay.entries.shift()!;
    replay.bytes -= gone.bytes;
    this.items--;
    this.bytes -= gone.bytes;
  }
}
