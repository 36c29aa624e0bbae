import { z } from "zod";
import { urlSecrets } from "../../config/secrets.js";

const int = (min: number, max: number) => z.int().min(min).max(max);

/** `session.postgres`: where the database is and how this gateway uses it (store postgres). */
export const postgresOptions = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .describe(
        "The database, as a connection string: postgres://user:password@host:5432/db (or ?host=/run/postgresql for a Unix socket). Usually ${DATABASE_URL}: it holds a password, so it is a secret (masked by config check, scrubbed from the log).",
      ),
    pool_size: int(1, 1_000)
      .default(10)
      .describe(
        "Connections this gateway keeps for reading and writing histories and state, at most; a query past them waits for one (up to connect_timeout_ms).",
      ),
    lock_connections: int(1, 10_000)
      .default(64)
      .describe(
        "Sessions whose turns run at once in this gateway, at most: each holds one connection of its own for its session's lock while its turn runs. A turn past them waits for one (up to lock_timeout_ms).",
      ),
    connect_timeout_ms: int(100, 600_000)
      .default(5_000)
      .describe("Time to open a connection (or wait for a free one of the pool) before the request fails with 503 store_unavailable."),
    query_timeout_ms: int(100, 3_600_000)
      .default(30_000)
      .describe("Time one query may take before it is cancelled and the request fails with 503 store_unavailable."),
    lock_timeout_ms: int(100, 86_400_000)
      .default(900_000)
      .describe(
        "Time a turn waits for its session's lock (held by a turn of the same session on another gateway, or for a lock connection) before it fails with 503 store_unavailable.",
      ),
    ready_timeout_ms: int(100, 60_000).default(2_000).describe("Time GET /ready waits for the database to answer before it answers 503."),
  })
  .optional();

export type PostgresOptions = NonNullable<z.output<typeof postgresOptions>>;

/** The secrets `session.postgres` holds: the connection string (whole) and its password. */
export function* postgresSecrets(options: unknown): Iterable<string> {
  const url = (options as { url?: unknown } | undefined)?.url;
  if (typeof url !== "string" || url === "") return;
  const found: string[] = [];
  urlSecrets(url, (secret) => found.push(secret));
  if (found.length > 0) yield url;
  yield* found;
}
