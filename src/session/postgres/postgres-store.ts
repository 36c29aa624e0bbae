import { ConfigError } from "../../errors.js";
import { realTimer } from "../../signals.js";
import { historyLimits, stateLimits } from "../limits.js";
import type { SessionStoreAdapter } from "../store.js";
import { PgDatabase } from "./database.js";
import { type PostgresOptions, postgresOptions, postgresSecrets } from "./options.js";
import { fleetMember } from "./fleet.js";
import { PgFeatureState } from "./pg-state.js";
import { PgHistoryStore } from "./pg-history.js";
import { PgTurnOrder } from "./turn-lock.js";

/**
 * Histories, the session list and features' state in Postgres, shared by
 * any number of gateways on one database, with the order of each session's
 * turns kept across all of them (turn-lock.ts), deliveries reaching a
 * session's streams on any gateway and `/stop` reaching its work on any
 * gateway (fleet.ts). Todo plans stay in each process. Opening
 * makes no connection: the driver is loaded, the schema migrated and the
 * LISTEN connection opened when start-up waits for the store
 * (`connection.ready`).
 */
export const postgresStore: SessionStoreAdapter = {
  type: "postgres",
  description:
    "histories, the session list and features' state (cron jobs, approvals, pairings) are kept in the Postgres database session.postgres.url names, shared by every gateway on it; turns of one session run one at a time across all of them, and deliveries and /stop reach whichever gateway holds the session's stream or runs its turn",
  options: postgresOptions,
  secrets: postgresSecrets,
  open: ({ config, options, logger }) => {
    const given = options as PostgresOptions | undefined;
    if (given === undefined) throw new ConfigError(['session.postgres.url: required with session.store "postgres" (e.g. "${DATABASE_URL}")']);
    const db = new PgDatabase(given, { logger });
    const fleet = fleetMember(db, { logger });
    return {
      history: new PgHistoryStore(db, historyLimits(config)),
      state: new PgFeatureState(db, stateLimits(config)),
      order: new PgTurnOrder(db, { connections: given.lock_connections, timeoutMs: given.lock_timeout_ms, timer: realTimer, now: Date.now }),
      stops: fleet.stops,
      outbox: fleet.outbox,
      connection: fleet.connection,
    };
  },
};
