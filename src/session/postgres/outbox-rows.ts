import { z } from "zod";
import type { OutboxItem } from "../subscription.js";
import type { PgDatabase } from "./database.js";
import { LISTENER_NAME } from "./pg-stops.js";

/**
 * The channel every gateway LISTENs to for new rows of `picoclaw_outbox`:
 * the payload is `<origin gateway> <row id> <l|w|h> <session key>`, the
 * letter the row's state (live, waiting, held).
 */
export const OUTBOX_CHANNEL = "picoclaw_outbox";

/** The channel a session a stream was opened for is announced on (the payload is its key): every gateway writes its items from then on. */
export const WATCH_CHANNEL = "picoclaw_watch";

/**
 * A row's state:
 * - `live`: a notice or a chat response's own delivery: shown by every stream that gets it, never kept;
 * - `waiting`: a delivery no stream holds: kept, handed out once (to the next stream that opens, or a chat response);
 * - `held`: a delivery the streams of one gateway (`holder`) have queued; back to `waiting` if they close without showing it;
 * - `shown`: a stream showed it;
 * - `taken`: handed out with a chat response.
 * Every row stays for the replay (`Last-Event-ID`) within the table's bounds.
 */
export type RowState = "live" | "waiting" | "held" | "shown" | "taken";

export interface NewRow {
  sessionKey: string;
  item: OutboxItem;
  bytes: number;
  state: "live" | "waiting" | "held";
}

export interface Row {
  id: string;
  sessionKey: string;
  item: OutboxItem;
  bytes: number;
  /** Its state before this call changed it. */
  state: RowState;
  /** This call made it held by this gateway. */
  mine: boolean;
}

/** An item as a row holds it (JSON written by a gateway; read back through this). */
const itemSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("delivery"), from: z.string(), text: z.string() }),
  z.object({ type: z.literal("notice"), event: z.string(), data: z.record(z.string(), z.unknown()) }),
]);

const STATES = new Set<RowState>(["live", "waiting", "held", "shown", "taken"]);

/** What the table holds at most, per session and in all; the oldest rows go first. */
export interface TableBounds {
  /** Rows of one session kept for its replay (every state but waiting, and held by a live gateway). */
  replay: { maxItems: number; maxBytes: number };
  /** Waiting rows of one session (kept deliveries). */
  kept: { maxItems: number; maxBytes: number };
  /** Rows of every session together (those a live gateway's streams hold aside). */
  total: { maxItems: number; maxBytes: number };
}

interface RawRow {
  id: string;
  session_key: string;
  item: unknown;
  bytes: number;
  state: string;
  mine: boolean;
}

/** Whether the gateway that holds row `o` is alive: its LISTEN connection is in pg_stat_activity. */
const HOLDER_ALIVE = (o: string) =>
  `EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database() AND a.application_name = '${LISTENER_NAME}' || ${o}.holder)`;

/** Rows of a session key that a stream may take: waiting, or held by a gateway that is gone. */
const CLAIMABLE = `(state = 'waiting' OR (state = 'held' AND holder IS DISTINCT FROM $2 AND NOT ${HOLDER_ALIVE("picoclaw_outbox")}))`;

/** Rows no live gateway's streams hold: those the bounds may drop. */
const DROPPABLE = `NOT (o.state = 'held' AND ${HOLDER_ALIVE("o")})`;

/** What the outbox does with its table (OutboxRows; tests give one in memory). */
export type OutboxTable = Pick<
  OutboxRows,
  | "newest"
  | "insert"
  | "claimByIds"
  | "claimAfter"
  | "opening"
  | "take"
  | "shown"
  | "giveBack"
  | "forget"
  | "prune"
  | "pruneAll"
  | "keptKeys"
  | "watch"
  | "watchedKeys"
  | "pruneWatched"
>;

/**
 * The statements of the outbox table (`picoclaw_outbox`, migration 2): a
 * row per item a session was sent, its id the event id every gateway's
 * streams give it (a bigserial: unique across the fleet, growing), each
 * new row NOTIFYed with a small payload (the row is read by its id).
 */
export class OutboxRows {
  constructor(
    private readonly db: Pick<PgDatabase, "query">,
    /** This gateway's id: the `holder` of what its streams hold, the `origin` of what it writes. */
    private readonly gateway: string,
  ) {}

  /** The highest row id there is ("0" for none). */
  async newest(): Promise<string> {
    const rows = await this.db.query<{ id: string }>("reading the outbox's newest id", "SELECT coalesce(max(id), 0)::text AS id FROM picoclaw_outbox");
    return rows[0]?.id ?? "0";
  }

  /** Writes new rows and NOTIFYs each; resolves with their ids, in order. */
  async insert(rows: readonly NewRow[]): Promise<string[]> {
    const written = await this.db.query<{ id: string }>(
      "writing deliveries to the outbox",
      `WITH ins AS (
         INSERT INTO picoclaw_outbox (session_key, item, bytes, state, holder, origin)
         SELECT t.k, t.i::json, t.b, t.s, CASE WHEN t.s = 'held' THEN $5 END, $5
         FROM unnest($1::text[], $2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS t(k, i, b, s, n) ORDER BY t.n
         RETURNING id, session_key, state)
       SELECT id::text AS id, pg_notify($6, $5 || ' ' || id || ' ' || left(state, 1) || ' ' || session_key) FROM ins ORDER BY ins.id`,
      [
        rows.map((row) => row.sessionKey),
        rows.map((row) => JSON.stringify(row.item)),
        rows.map((row) => row.bytes),
        rows.map((row) => row.state),
        this.gateway,
        OUTBOX_CHANNEL,
      ],
    );
    return written.map((row) => row.id);
  }

  /** The rows of these ids (another gateway's, NOTIFYed): the waiting ones are now held by this gateway. */
  async claimByIds(ids: readonly string[]): Promise<Row[]> {
    return this.claimThenRead(
      "reading deliveries other gateways wrote",
      "id = ANY($1::bigint[]) AND state = 'waiting'",
      [ids, this.gateway],
      "id = ANY($1::bigint[])",
      [ids],
    );
  }

  /** Other gateways' rows of these sessions after `after` (what a lost LISTEN connection missed); the waiting ones now held here. */
  async claimAfter(after: string, sessionKeys: readonly string[]): Promise<Row[]> {
    const rows = "id > $1::bigint AND session_key = ANY($3::text[]) AND origin <> $2";
    return this.claimThenRead(
      "reading what other gateways wrote while this one was not listening",
      `${rows} AND state = 'waiting'`,
      [after, this.gateway, sessionKeys],
      rows,
      [after, this.gateway, sessionKeys],
    );
  }

  /** What a stream that opens starts with: the session's claimable rows (now held here), and every row after `after`. */
  async opening(sessionKey: string, after: string): Promise<Row[]> {
    return this.claimThenRead(
      `reading the deliveries kept for ${sessionKey}`,
      `session_key = $1 AND ${CLAIMABLE}`,
      [sessionKey, this.gateway],
      "session_key = $1 AND id > $2::bigint",
      [sessionKey, after],
    );
  }

  /**
   * The session's claimable rows, now taken (handed out with a chat
   * response), oldest first; `more` when the session has rows a gateway's
   * streams hold (they may come back).
   */
  async take(sessionKey: string): Promise<{ rows: Row[]; more: boolean }> {
    const raw = await this.db.query<RawRow & { more: boolean }>(
      `taking the deliveries kept for ${sessionKey}`,
      `WITH taken AS (UPDATE picoclaw_outbox SET state = 'taken', holder = NULL WHERE session_key = $1 AND ${CLAIMABLE}
         RETURNING id, session_key, item, bytes)
       SELECT t.id::text AS id, t.session_key, t.item, t.bytes, 'waiting' AS state, false AS mine, m.more
       FROM (SELECT EXISTS (SELECT 1 FROM picoclaw_outbox WHERE session_key = $1 AND state = 'held') AS more) m LEFT JOIN taken t ON true`,
      [sessionKey, this.gateway],
    );
    const rows = this.rowsOf(raw.filter((row) => row.id !== null)).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    return { rows, more: raw[0]?.more ?? true };
  }

  /** The sessions with rows that are or may be kept (waiting, or held by a gateway's streams). */
  async keptKeys(): Promise<string[]> {
    const rows = await this.db.query<{ session_key: string }>(
      "reading which sessions have deliveries kept",
      "SELECT DISTINCT session_key FROM picoclaw_outbox WHERE state IN ('waiting', 'held')",
    );
    return rows.map((row) => row.session_key);
  }

  /** Records that a stream was opened for the session, and NOTIFYs it: every gateway writes its items from now on. */
  async watch(sessionKey: string): Promise<void> {
    await this.db.query(
      `announcing a stream of ${sessionKey}`,
      `WITH up AS (INSERT INTO picoclaw_watched (session_key) VALUES ($1) ON CONFLICT (session_key) DO UPDATE SET at = now() RETURNING session_key)
       SELECT pg_notify($2, session_key) FROM up`,
      [sessionKey, WATCH_CHANNEL],
    );
  }

  /** The sessions streams were opened for most recently, at most `limit`. */
  async watchedKeys(limit: number): Promise<string[]> {
    const rows = await this.db.query<{ session_key: string }>(
      "reading which sessions streams were opened for",
      "SELECT session_key FROM picoclaw_watched ORDER BY at DESC LIMIT $1",
      [limit],
    );
    return rows.map((row) => row.session_key);
  }

  /** Forgets all but the `limit` sessions streams were opened for most recently. */
  async pruneWatched(limit: number): Promise<void> {
    await this.db.query(
      "keeping the list of watched sessions within its bound",
      "DELETE FROM picoclaw_watched WHERE session_key IN (SELECT session_key FROM picoclaw_watched ORDER BY at DESC OFFSET $1)",
      [limit],
    );
  }

  /** Rows a stream showed: no longer kept. */
  async shown(ids: readonly string[]): Promise<void> {
    await this.db.query(
      "recording deliveries shown",
      "UPDATE picoclaw_outbox SET state = 'shown', holder = NULL WHERE id = ANY($1::bigint[]) AND state IN ('waiting', 'held')",
      [ids],
    );
  }

  /** Rows this gateway's streams held and did not show: waiting again, for any gateway. */
  async giveBack(ids: readonly string[]): Promise<void> {
    await this.db.query(
      "giving back deliveries no stream showed",
      "UPDATE picoclaw_outbox SET state = 'waiting', holder = NULL WHERE id = ANY($1::bigint[]) AND state = 'held' AND holder = $2",
      [ids, this.gateway],
    );
  }

  /** Forgets a session's rows (/clear). */
  async forget(sessionKey: string): Promise<void> {
    await this.db.query(`forgetting the deliveries of ${sessionKey}`, "DELETE FROM picoclaw_outbox WHERE session_key = $1", [sessionKey]);
  }

  /** Drops the oldest rows of these sessions past their bounds; resolves with the waiting ones dropped, per session. */
  async prune(sessionKeys: readonly string[], bounds: TableBounds): Promise<Map<string, number>> {
    const { replay, kept } = bounds;
    const rows = await this.db.query<{ session_key: string; state: string }>(
      "keeping the outbox within its bounds",
      `DELETE FROM picoclaw_outbox o USING (
         SELECT id,
           row_number() OVER (PARTITION BY session_key ORDER BY id DESC) AS n,
           sum(bytes) OVER (PARTITION BY session_key ORDER BY id DESC) AS b,
           row_number() OVER (PARTITION BY session_key, state ORDER BY id DESC) AS kn,
           sum(bytes) OVER (PARTITION BY session_key, state ORDER BY id DESC) AS kb
         FROM picoclaw_outbox WHERE session_key = ANY($1::text[])) r
       WHERE o.id = r.id AND ${DROPPABLE} AND (
         (o.state <> 'waiting' AND r.n > 1 AND (r.n > $2 OR r.b > $3))
         OR (o.state = 'waiting' AND r.kn > 1 AND (r.kn > $4 OR r.kb > $5)))
       RETURNING o.session_key, o.state`,
      [sessionKeys, replay.maxItems, replay.maxBytes, kept.maxItems, kept.maxBytes],
    );
    return droppedWaiting(rows);
  }

  /** Drops the oldest rows of the whole table past its bounds (a full scan: called now and then); the waiting ones dropped, per session. */
  async pruneAll(bounds: TableBounds): Promise<Map<string, number>> {
    const rows = await this.db.query<{ session_key: string; state: string }>(
      "keeping the outbox within its bounds",
      `DELETE FROM picoclaw_outbox o USING (
         SELECT id, row_number() OVER w AS n, sum(bytes) OVER w AS b FROM picoclaw_outbox WINDOW w AS (ORDER BY id DESC)) r
       WHERE o.id = r.id AND ${DROPPABLE} AND r.n > 1 AND (r.n > $1 OR r.b > $2)
       RETURNING o.session_key, o.state`,
      [bounds.total.maxItems, bounds.total.maxBytes],
    );
    return droppedWaiting(rows);
  }

  /**
   * Claims rows (`claim`: now held by this gateway), then reads the others
   * asked for (`asked`) as they are now: a row another gateway claimed a
   * moment before is `held` (its streams show it, so do this one's), one a
   * chat response took is `taken`. Two statements: the second sees what the
   * first waited for. In the order of their ids.
   */
  private async claimThenRead(what: string, claim: string, claimValues: unknown[], asked: string, askedValues: unknown[]): Promise<Row[]> {
    const claimed = await this.read(
      what,
      `UPDATE picoclaw_outbox SET state = 'held', holder = $2 WHERE ${claim}
       RETURNING id::text AS id, session_key, item, bytes, 'waiting' AS state, true AS mine`,
      claimValues,
    );
    let others: Row[] = [];
    try {
      others = await this.read(what, `SELECT id::text AS id, session_key, item, bytes, state, false AS mine FROM picoclaw_outbox WHERE ${asked}`, askedValues);
    } catch {
      // What was claimed is this gateway's now: handed to its streams, whatever else could not be read.
    }
    const mine = new Set(claimed.map((row) => row.id));
    return [...claimed, ...others.filter((row) => !mine.has(row.id))].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  }

  private async read(what: string, text: string, values: unknown[]): Promise<Row[]> {
    return this.rowsOf(await this.db.query<RawRow>(what, text, values));
  }

  private rowsOf(raw: readonly RawRow[]): Row[] {
    const rows: Row[] = [];
    for (const row of raw) {
      const item = itemSchema.safeParse(row.item);
      // A row this gateway cannot read (written by a newer one?) is passed over: nothing else depends on it.
      if (!item.success || !STATES.has(row.state as RowState)) continue;
      rows.push({ id: row.id, sessionKey: row.session_key, item: item.data, bytes: row.bytes, state: row.state as RowState, mine: row.mine });
    }
    return rows;
  }
}

function droppedWaiting(rows: readonly { session_key: string; state: string }[]): Map<string, number> {
  const dropped = new Map<string, number>();
  // A held row dropped is one a gateway that is gone held: kept for the session as a waiting one is.
  for (const row of rows) if (row.state === "waiting" || row.state === "held") dropped.set(row.session_key, (dropped.get(row.session_key) ?? 0) + 1);
  return dropped;
}
