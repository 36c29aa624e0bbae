import type { ClientBase } from "pg";
import { StoreFailedError } from "./errors.js";

/**
 * The schema of store postgres, as versioned migrations. Each runs once, in
 * a transaction of its own, and is recorded in `picoclaw_migrations`;
 * a gateway starting migrates what is missing under an advisory lock, so
 * several starting at once migrate once. A migration, once released, is
 * never changed: a change of schema is a new one at the end.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "histories, session list, feature state",
    sql: `
      CREATE SEQUENCE picoclaw_revisions;
      CREATE SEQUENCE picoclaw_changes;
      CREATE TABLE picoclaw_sessions (
        key text PRIMARY KEY,
        rev bigint NOT NULL,
        first_seq bigint NOT NULL,
        count integer NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        changed bigint NOT NULL
      );
      CREATE INDEX picoclaw_sessions_changed ON picoclaw_sessions (changed DESC);
      CREATE TABLE picoclaw_messages (
        session_key text NOT NULL REFERENCES picoclaw_sessions (key) ON DELETE CASCADE,
        seq bigint NOT NULL,
        message json NOT NULL,
        PRIMARY KEY (session_key, seq)
      );
      CREATE TABLE picoclaw_state (
        namespace text NOT NULL,
        key text NOT NULL,
        value json NOT NULL,
        version integer NOT NULL,
        bytes integer NOT NULL,
        PRIMARY KEY (namespace, key)
      );
    `,
  },
  {
    version: 2,
    name: "the outbox: what reaches sessions' event streams, across gateways",
    sql: `
      CREATE TABLE picoclaw_outbox (
        id bigserial PRIMARY KEY,
        session_key text NOT NULL,
        item json NOT NULL,
        bytes integer NOT NULL,
        state text NOT NULL CHECK (state IN ('live', 'waiting', 'held', 'shown', 'taken')),
        holder text,
        origin text NOT NULL
      );
      CREATE INDEX picoclaw_outbox_session ON picoclaw_outbox (session_key, id);
      CREATE TABLE picoclaw_watched (
        session_key text PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX picoclaw_watched_at ON picoclaw_watched (at);
    `,
  },
];

/** The advisory lock (a bigint of its own) held while migrating. */
export const MIGRATION_LOCK = "7398274611730001";

/**
 * Brings the database's schema to the newest migration this gateway knows;
 * resolves with the versions it applied. Refuses a database migrated past
 * them (a newer gateway's): this one would not know its tables.
 */
export async function migrate(client: ClientBase, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  await client.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK]);
  try {
    await client.query(
      "CREATE TABLE IF NOT EXISTS picoclaw_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM picoclaw_migrations")).rows.map((row) => row.version));
    const newest = Math.max(0, ...migrations.map((m) => m.version));
    const ahead = [...done].filter((version) => version > newest);
    if (ahead.length > 0) {
      throw new StoreFailedError(
        `the session database's schema is at version ${Math.max(...ahead)}, newer than this gateway knows (${newest}): a newer gateway migrated it; run that version`,
      );
    }
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query("BEGIN");
      try {
        await client.query(migration.sql);
        await client.query("INSERT INTO picoclaw_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new StoreFailedError(`migration ${migration.version} (${migration.name}) of the session database failed: ${(error as Error).message}`, error);
      }
      applied.push(migration.version);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK]).catch(() => {});
  }
}
