import type { Pool, PoolClient, QueryResultRow } from "pg";
import { ConfigError, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import { type Timer, realTimer } from "../../signals.js";
import type { StoreConnection } from "../store.js";
import { StoreUnavailableError, storeError } from "./errors.js";
import { migrate } from "./migrations.js";
import type { PostgresOptions } from "./options.js";

/** What the store uses of the driver. */
interface PgModule {
  Pool: typeof import("pg").Pool;
  Client?: typeof import("pg").Client;
}

/** A connection of its own, outside the pools (the gateway's LISTEN connection). */
export type DedicatedClient = import("pg").Client;

interface Pools {
  /** Histories and state: short queries and transactions. */
  main: Pool;
  /** One connection per session whose turn runs here, holding its lock (session.postgres.lock_connections). */
  locks: Pool;
}

export interface DatabaseParts {
  logger: Logger;
  /** Times GET /ready's probe (default: real timers). */
  timer?: Timer;
  /** Loads the driver (default: `import("pg")`, done when the store is first used: only this store needs it). */
  load?: () => Promise<Partial<PgModule> & { default?: PgModule }>;
}

/**
 * The session database: the `pg` driver (loaded when this store is chosen,
 * never otherwise), its two pools, and the schema, migrated when it is
 * first reached. A start that fails (the database down) is tried again by
 * the next call, so a gateway whose database comes back recovers without
 * a restart. No message of it holds the connection string: the driver's
 * never do, and the log scrubs the config's secrets besides.
 */
export class PgDatabase implements StoreConnection {
  private starting: Promise<Pools> | undefined;
  private closed = false;
  private readonly timer: Timer;

  constructor(
    readonly options: PostgresOptions,
    private readonly parts: DatabaseParts,
  ) {
    this.timer = parts.timer ?? realTimer;
  }

  async ready(): Promise<void> {
    await this.pools();
  }

  /** `SELECT 1` within ready_timeout_ms, or a StoreUnavailableError saying why not. */
  async probe(): Promise<void> {
    const ms = this.options.ready_timeout_ms;
    let cancel = () => {};
    const late = new Promise<never>((_, reject) => {
      cancel = this.timer(ms, () =>
        reject(new StoreUnavailableError(`the session database did not answer within ${ms} ms (session.postgres.ready_timeout_ms)`)),
      );
    });
    try {
      await Promise.race([this.query("answering GET /ready", "SELECT 1"), late]);
    } finally {
      cancel();
    }
  }

  async query<R extends QueryResultRow>(what: string, text: string, values: unknown[] = []): Promise<R[]> {
    const { main } = await this.pools();
    try {
      return (await main.query<R>(text, values)).rows;
    } catch (error) {
      throw storeError(what, error);
    }
  }

  /** Runs `work` in a transaction on one connection: committed when it resolves, rolled back when it throws. */
  async transaction<T>(what: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
    const { main } = await this.pools();
    let client: PoolClient;
    try {
      client = await main.connect();
    } catch (error) {
      throw storeError(what, error);
    }
    const onError = () => {};
    client.on("error", onError);
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollback: unknown) => (broken = rollback instanceof Error ? rollback : new Error(String(rollback))));
      throw storeError(what, error);
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  /** A connection of the lock pool, for a session's lock; `release` it (with an error when it may be broken: it is then closed). */
  async lockClient(what: string): Promise<PoolClient> {
    const { locks } = await this.pools();
    try {
      return await locks.connect();
    } catch (error) {
      throw storeError(what, error);
    }
  }

  /**
   * A new connection of its own, not of a pool, connected (within
   * connect_timeout_ms), its `application_name` the one given: the
   * gateway's LISTEN connection, which must stay open. The caller ends it.
   */
  async dedicatedClient(what: string, applicationName: string): Promise<DedicatedClient> {
    await this.pools();
    const pg = await this.driver();
    if (!pg.Client) throw storeError(what, new Error("the driver has no Client"));
    const o = this.options;
    const client = new pg.Client({
      connectionString: o.url,
      connectionTimeoutMillis: o.connect_timeout_ms,
      application_name: applicationName,
      // A server that went without a word (a host that died) is noticed by the kernel's keepalives.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    const onError = () => {};
    client.on("error", onError);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => {});
      throw storeError(what, error);
    } finally {
      client.off("error", onError);
    }
    return client;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const started = await this.starting?.catch(() => undefined);
    if (started) await Promise.allSettled([started.main.end(), started.locks.end()]);
  }

  private pools(): Promise<Pools> {
    if (this.closed) return Promise.reject(new StoreUnavailableError("the session store is closed"));
    this.starting ??= this.start().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private async start(): Promise<Pools> {
    const pg = await this.driver();
    const o = this.options;
    const common = { connectionString: o.url, connectionTimeoutMillis: o.connect_timeout_ms, idleTimeoutMillis: 30_000 };
    const main = new pg.Pool({
      ...common,
      max: o.pool_size,
      query_timeout: o.query_timeout_ms,
      statement_timeout: o.query_timeout_ms,
      application_name: "picoclaw",
    });
    // A lock is held for a whole turn: no statement or query timeout there (the wait for it has its own, lock_timeout_ms).
    const locks = new pg.Pool({ ...common, max: o.lock_connections, application_name: "picoclaw-turns" });
    // An idle connection the server dropped (a restart) is removed by the pool; said once, never a crash.
    for (const pool of [main, locks]) pool.on("error", (error) => this.parts.logger.warn(`the session database dropped a connection: ${messageOf(error)}`));
    try {
      const client = await main.connect();
      try {
        const applied = await migrate(client);
        if (applied.length > 0) this.parts.logger.info(`the session database was migrated to schema version ${applied.at(-1)}`);
      } finally {
        client.release();
      }
    } catch (error) {
      await Promise.allSettled([main.end(), locks.end()]);
      throw storeError("reaching it and migrating its schema", error);
    }
    return { main, locks };
  }

  private async driver(): Promise<PgModule> {
    try {
      const loaded: Partial<PgModule> & { default?: PgModule } = await (this.parts.load ?? (() => import("pg")))();
      const pool = loaded.default?.Pool ?? loaded.Pool;
      if (!pool) throw new Error("it has no Pool");
      const client = loaded.default?.Client ?? loaded.Client;
      return { Pool: pool, ...(client ? { Client: client } : {}) };
    } catch (error) {
      throw new ConfigError([`session.store: "postgres" needs the package pg, which could not be loaded (${messageOf(error)})`]);
    }
  }
}
