import {
  DEFAULT_STATE_LIMITS,
  type FeatureStateStore,
  type StateEntry,
  type StateLimits,
  checkStateRoom,
  frozenEntry,
  jsonValue,
  sizeOf,
} from "../feature-state.js";
import type { PgDatabase } from "./database.js";

/** The first half of the advisory lock a change to a namespace takes (its limits are counted under it). */
export const STATE_LOCK_CLASS = 1_885_563_460;

/**
 * Features' durable state in Postgres (`picoclaw_state`: a row per entry),
 * read by every gateway on the database. A change is a transaction: the
 * namespace's advisory lock taken (so its limits are counted with no other
 * change under way), the entry's version compared with `expect`, then
 * written. Of two gateways taking the same due cron run at its version,
 * one writes and the other is told no (undefined).
 */
export class PgFeatureState implements FeatureStateStore {
  /** Every gateway on the database reads and writes it. */
  readonly shared = true;
  private closed = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly limits: StateLimits = DEFAULT_STATE_LIMITS,
  ) {}

  async get(namespace: string, key: string): Promise<StateEntry | undefined> {
    this.ensureOpen();
    const rows = await this.db.query<{ value: unknown; version: number }>(
      `reading state ${namespace}/${key}`,
      "SELECT value, version FROM picoclaw_state WHERE namespace = $1 AND key = $2",
      [namespace, key],
    );
    const row = rows[0];
    return row && frozenEntry({ key, value: row.value, version: row.version });
  }

  async list(namespace: string): Promise<StateEntry[]> {
    this.ensureOpen();
    const rows = await this.db.query<{ key: string; value: unknown; version: number }>(
      `reading state ${namespace}`,
      "SELECT key, value, version FROM picoclaw_state WHERE namespace = $1",
      [namespace],
    );
    return rows.map((row) => frozenEntry(row)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async put(namespace: string, key: string, value: unknown, expect?: number): Promise<number | undefined> {
    this.ensureOpen();
    const json = jsonValue(namespace, key, value);
    const bytes = sizeOf({ key, value: json });
    return this.db.transaction(`writing state ${namespace}/${key}`, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [STATE_LOCK_CLASS, namespace]);
      const found = (await client.query<{ version: number }>("SELECT version FROM picoclaw_state WHERE namespace = $1 AND key = $2", [namespace, key])).rows[0];
      if (expect !== undefined && (found?.version ?? 0) !== expect) return undefined;
      const totals = (
        await client.query<{ keys: number; bytes: string }>(
          "SELECT count(*)::int AS keys, coalesce(sum(bytes), 0)::bigint AS bytes FROM picoclaw_state WHERE namespace = $1 AND key <> $2",
          [namespace, key],
        )
      ).rows[0]!;
      checkStateRoom(namespace, this.limits, key, { keys: totals.keys, bytes: Number(totals.bytes) + bytes, isNew: !found });
      const version = (found?.version ?? 0) + 1;
      await client.query(
        `INSERT INTO picoclaw_state (namespace, key, value, version, bytes) VALUES ($1, $2, $3::json, $4, $5)
         ON CONFLICT (namespace, key) DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version, bytes = EXCLUDED.bytes`,
        [namespace, key, JSON.stringify(json), version, bytes],
      );
      return version;
    });
  }

  async delete(namespace: string, key: string, expect?: number): Promise<boolean> {
    this.ensureOpen();
    const rows = await this.db.query<{ key: string }>(
      `removing state ${namespace}/${key}`,
      "DELETE FROM picoclaw_state WHERE namespace = $1 AND key = $2 AND ($3::int IS NULL OR version = $3::int) RETURNING key",
      [namespace, key, expect ?? null],
    );
    return rows.length > 0;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error("the session store is closed");
  }
}
