import type { PoolClient } from "pg";
import type { ChatMessage } from "../../models/message.js";
import type { HistoryPage, HistoryStore, SessionInfo } from "../history.js";
import { isTransientKey } from "../key.js";
import { KeyQueue } from "../key-queue.js";
import { type AppendOutcome, type SessionCacheOptions, SessionCache } from "../session-cache.js";
import type { PgDatabase } from "./database.js";

/** What this process knows of a session it holds in memory: the database's revision it matches, and where its messages start there. */
interface Known {
  /** The session row's `rev` (from a sequence: never the same twice, even for a session cleared and begun again). */
  rev: string;
  /** `seq` of its first message in the database. */
  first: number;
  /** Memory holds less than the database (read back past today's limits): the next change rewrites it whole. */
  dirty: boolean;
}

interface SessionRow {
  rev: string;
  first_seq: string;
  updated_at: string;
  message: ChatMessage | null;
}

/**
 * Histories in Postgres, shared by every gateway on the database: a row per
 * session (`picoclaw_sessions`: its revision, count and times) and a row
 * per message (`picoclaw_messages`, in order by `seq`). Subagents' and
 * one-message sessions are never written: they live in memory, as with the
 * JSONL store.
 *
 * Memory is a cache (a SessionCache, bounded as the config says) of the
 * sessions used here recently. Another gateway may have changed a session
 * since: `hold` (before a turn reads it) asks the database for its revision
 * and reads it again when it moved. A change is one transaction: the
 * session's row locked, read again if another gateway moved it, the
 * messages added (or the history rewritten when old exchanges were dropped
 * to fit), the row's revision moved on. It resolves once committed; when it
 * fails nothing of it is kept, in memory either.
 */
export class PgHistoryStore implements HistoryStore {
  private readonly cache: SessionCache;
  private readonly known = new Map<string, Known>();
  private readonly queue = new KeyQueue();
  private readonly now: () => number;
  private closed = false;

  constructor(
    private readonly db: PgDatabase,
    opts: SessionCacheOptions = {},
  ) {
    this.cache = new SessionCache(opts);
    this.now = opts.now ?? Date.now;
  }

  async hold(sessionKey: string): Promise<() => void> {
    const release = await this.cache.hold(sessionKey);
    if (isTransientKey(sessionKey)) return release;
    try {
      await this.queue.run(sessionKey, () => this.refresh(sessionKey));
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  async get(sessionKey: string): Promise<ChatMessage[]> {
    return this.cache.get(sessionKey);
  }

  /** Read from the database (another gateway may have changed it), the last `limit` messages only; never brings the session into memory. */
  async page(sessionKey: string, limit: number): Promise<HistoryPage> {
    if (isTransientKey(sessionKey)) return this.cache.page(sessionKey, limit);
    this.ensureOpen();
    const rows = await this.db.query<{ count: number; message: ChatMessage | null }>(
      `reading the history of ${sessionKey}`,
      `SELECT s.count, m.message FROM picoclaw_sessions s
         LEFT JOIN LATERAL (SELECT seq, message FROM picoclaw_messages WHERE session_key = s.key ORDER BY seq DESC LIMIT $2) m ON true
       WHERE s.key = $1 ORDER BY m.seq`,
      [sessionKey, Math.max(1, limit)],
    );
    return { messages: rows.flatMap((row) => (row.message ? [row.message] : [])), total: rows[0]?.count ?? 0 };
  }

  async append(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.append(sessionKey, messages);
    if (messages.length === 0) return;
    return this.queue.run(sessionKey, () => this.commit(sessionKey, (key) => this.cache.add(key, messages), messages));
  }

  async replace(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.replace(sessionKey, messages);
    return this.queue.run(sessionKey, () =>
      this.commit(sessionKey, (key) => {
        this.cache.clear(key);
        return this.cache.add(key, messages);
      }),
    );
  }

  async clear(sessionKey: string): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.clear(sessionKey);
    return this.queue.run(sessionKey, async () => {
      this.ensureOpen();
      await this.db.query(`clearing ${sessionKey}`, "DELETE FROM picoclaw_sessions WHERE key = $1", [sessionKey]);
      this.forget(sessionKey);
    });
  }

  /** Sessions below another are never written (subagents'): they are in memory only. */
  async clearBelow(sessionKey: string): Promise<void> {
    this.cache.clearBelow(sessionKey);
  }

  async list(limit: number): Promise<SessionInfo[]> {
    this.ensureOpen();
    const rows = await this.db.query<{ key: string; count: number; updated_at: string }>(
      "listing the sessions",
      "SELECT key, count, updated_at FROM picoclaw_sessions WHERE count > 0 ORDER BY changed DESC LIMIT $1",
      [Math.max(0, limit)],
    );
    return rows.map((row) => ({ key: row.key, messages: row.count, updatedAt: Number(row.updated_at) }));
  }

  /** Root sessions are in the database (what the phases tool's `storage` says: "session"); subagents' stay in memory. */
  isDurable(sessionKey: string): boolean {
    return !isTransientKey(sessionKey);
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

  /** Waits for the changes under way; the database's pools are closed by its connection (PgDatabase.close). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.drain();
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error("the session store is closed");
  }

  private forget(sessionKey: string): void {
    this.cache.clear(sessionKey);
    this.known.delete(sessionKey);
  }

  /** Makes memory hold what the database holds of the session: read again when its revision moved (or memory has none of it). */
  private async refresh(sessionKey: string): Promise<void> {
    this.ensureOpen();
    const found = await this.db.query<{ rev: string }>(`reading the history of ${sessionKey}`, "SELECT rev FROM picoclaw_sessions WHERE key = $1", [
      sessionKey,
    ]);
    const rev = found[0]?.rev;
    if (rev === undefined) return this.forget(sessionKey);
    if (this.cache.has(sessionKey) && this.known.get(sessionKey)?.rev === rev) return;
    const rows = await this.db.query<SessionRow>(`reading the history of ${sessionKey}`, LOAD, [sessionKey]);
    this.restore(sessionKey, rows);
  }

  /** Puts the session as `rows` (LOAD's) have it in memory; none: it has no history. */
  private restore(sessionKey: string, rows: readonly SessionRow[]): void {
    const head = rows[0];
    if (!head) {
      this.forget(sessionKey);
      return;
    }
    const messages = rows.flatMap((row) => (row.message ? [row.message] : []));
    const outcome = this.cache.restore(sessionKey, messages, Number(head.updated_at));
    this.known.set(sessionKey, { rev: head.rev, first: Number(head.first_seq), dirty: outcome.dropped > 0 || outcome.fitted });
    this.pruneKnown();
  }

  /**
   * Applies `change` to the session in memory and writes the outcome in one
   * transaction: `appended` added at the end (and the exchanges dropped to
   * fit deleted from the front), or the whole history anew.
   */
  private async commit(sessionKey: string, change: (key: string) => AppendOutcome, appended?: readonly ChatMessage[]): Promise<void> {
    this.ensureOpen();
    // Held while it is changed: another session's change cannot evict it in between.
    const release = await this.cache.hold(sessionKey);
    try {
      const known = await this.db.transaction(`writing the history of ${sessionKey}`, (client) => this.write(client, sessionKey, change, appended));
      if (known) this.known.set(sessionKey, known);
      else this.forget(sessionKey);
    } catch (error) {
      // Memory must not hold what the database does not: the next turn reads it again.
      this.forget(sessionKey);
      throw error;
    } finally {
      release();
    }
  }

  private async write(
    client: PoolClient,
    sessionKey: string,
    change: (key: string) => AppendOutcome,
    appended: readonly ChatMessage[] | undefined,
  ): Promise<Known | undefined> {
    const now = this.now();
    await client.query(
      `INSERT INTO picoclaw_sessions (key, rev, first_seq, count, created_at, updated_at, changed)
       VALUES ($1, nextval('picoclaw_revisions'), 0, 0, $2, $2, nextval('picoclaw_changes')) ON CONFLICT (key) DO NOTHING`,
      [sessionKey, now],
    );
    const row = (
      await client.query<{ rev: string; first_seq: string; count: number }>("SELECT rev, first_seq, count FROM picoclaw_sessions WHERE key = $1 FOR UPDATE", [
        sessionKey,
      ])
    ).rows[0]!;
    let known = this.known.get(sessionKey);
    if (!this.cache.has(sessionKey) || known?.rev !== row.rev) {
      // Another gateway changed it since this one read it (or this one never did): read it again, under the row's lock.
      if (row.count === 0) this.cache.clear(sessionKey);
      else this.restore(sessionKey, (await client.query<SessionRow>(LOAD, [sessionKey])).rows);
      known = this.known.get(sessionKey) ?? { rev: row.rev, first: Number(row.first_seq), dirty: false };
    }
    const before = this.cache.count(sessionKey);
    const outcome = change(sessionKey);
    const kept = this.cache.get(sessionKey);
    if (kept.length === 0) {
      await client.query("DELETE FROM picoclaw_sessions WHERE key = $1", [sessionKey]);
      return undefined;
    }
    let first = known.first;
    if (appended && !outcome.fitted && !known.dirty) {
      if (outcome.dropped > 0) await client.query("DELETE FROM picoclaw_messages WHERE session_key = $1 AND seq < $2", [sessionKey, first + outcome.dropped]);
      await insertMessages(client, sessionKey, first + before, appended);
      first += outcome.dropped;
    } else {
      await client.query("DELETE FROM picoclaw_messages WHERE session_key = $1", [sessionKey]);
      first = 0;
      await insertMessages(client, sessionKey, first, kept);
    }
    const updated = await client.query<{ rev: string }>(
      `UPDATE picoclaw_sessions SET rev = nextval('picoclaw_revisions'), first_seq = $2, count = $3, updated_at = $4, changed = nextval('picoclaw_changes')
       WHERE key = $1 RETURNING rev`,
      [sessionKey, first, kept.length, now],
    );
    return { rev: updated.rows[0]!.rev, first, dirty: false };
  }

  /** Keeps what this process knows of sessions to those in memory. */
  private pruneKnown(): void {
    if (this.known.size <= 2 * this.cache.size + 16) return;
    for (const key of this.known.keys()) if (!this.cache.has(key)) this.known.delete(key);
  }
}

/** A session's row and its messages, in order, in one statement (one snapshot: never half of another gateway's change). */
const LOAD = `SELECT s.rev, s.first_seq, s.updated_at, m.message FROM picoclaw_sessions s
  LEFT JOIN picoclaw_messages m ON m.session_key = s.key WHERE s.key = $1 ORDER BY m.seq`;

async function insertMessages(client: PoolClient, sessionKey: string, firstSeq: number, messages: readonly ChatMessage[]): Promise<void> {
  await client.query(
    `INSERT INTO picoclaw_messages (session_key, seq, message)
     SELECT $1, $2::bigint + t.ord - 1, t.m::json FROM unnest($3::text[]) WITH ORDINALITY AS t(m, ord)`,
    [sessionKey, firstSeq, messages.map((message) => JSON.stringify(message))],
  );
}
