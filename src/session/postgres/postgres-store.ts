import { ConfigError } from "../../errors.js";
import { realTimer } from "../../signals.js";
import { historyLimits, stateLimits } from "../limits.js";
import type { SessionStoreAdapter } from "../store.js";
import { PgDatabase } from "./database.js";
import { type PostgresOptions, postgresOptions, postgresSecrets } from "./options.js";
import { PgFeatureState } from "./pg-state.js";
import { PgHistoryStore } from "./pg-history.js";
import { PgTurnOrder } from "./turn-lock.js";

/**
 * Histories, the session list and features' state in Postgres, shared by
 * any number of gateways on one database, with the order of each session's
 * turns kept across all of them (turn-lock.ts). Stop switches, the outbox
 * and todo plans stay in each process. Opening makes no connection: the
 * driver is loaded and the schema migrated when the store is first used,
 * which start-up waits for (`connection.ready`).
 */
export const postgresStore: SessionStoreAdapter = {
  type: "postgres",
  description:
    "histories, the session list and features' state (cron jobs, approvals, pairings) are kept in the Postgres database session.postgres.url names, shared by every gateway on it; turns of one session run one at a time across all of them",
  options: postgresOptions,
  secrets: postgresSecrets,
  open: ({ config, options, logger }) => {
    const given = options as PostgresOptions | undefined;
    if (given === undefined) throw new ConfigError(['session.postgres.url: required with session.store "postgres" (e.g. "${DATABASE_URL}")']);
    const db = new PgDatabase(given, { logger });
    return {
      history: new PgHistoryStore(db, historyLimits(config)),
      state: new PgFeatureState(db, stateLimits(config)),
      order: new PgTurnOrder(db, { connections: given.lock_connections, timeoutMs: given.lock_timeout_ms, timer: realTimer, now: Date.now }),
      connection: db,
    };
  },
};
