import type { StoreOption } from "../config/layout.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../log.js";
import type { FeatureStateStore } from "./feature-state.js";
import type { HistoryStore } from "./history.js";
import type { SessionOutbox } from "./outbox.js";
import type { StopBoard } from "./stop-switches.js";
import type { TurnOrder } from "./turn-order.js";

/**
 * A session store as it registers: the `session.store` name it answers
 * to, a line on what it does (the schema's description), its own options
 * if it has any (`session.<type>`), and how it opens the ports it
 * implements. The runtime gets what it opens and never knows which store
 * it has. The built-in ones are listed in stores.ts.
 */
export interface SessionStoreAdapter extends StoreOption {
  /** Opens the store (a folder's lock, a database's pool); throws a PicoclawError that says why it cannot. */
  open(context: StoreContext): SessionPorts;
}

export interface StoreContext {
  /** The core config (histories' bounds, `session.dir`...). */
  config: Config;
  /** Its own options (`session.<type>`), when it declares them. */
  options: unknown;
  /** The folder relative paths in the config resolve against. */
  baseDir: string;
  logger: Logger;
}

/**
 * What a store implements: where histories are kept, and (optionally) the
 * other ports a fleet of gateways shares. What a store leaves out is the
 * in-process one: the turn order per session (a queue per key), stop
 * switches, the outbox of deliveries, feature state in memory.
 */
export interface SessionPorts {
  history: HistoryStore;
  order?: TurnOrder;
  stops?: StopBoard;
  outbox?: SessionOutbox;
  state?: FeatureStateStore;
  /** A store behind a connection (a database): how the gateway waits for it, asks after it, and ends it. */
  connection?: StoreConnection;
}

/**
 * The connection of a store that is reached over one (a database's pool).
 * Stores in this process (memory, jsonl) have none: they are ready when
 * they open, and answer for as long as the process runs.
 */
export interface StoreConnection {
  /** Resolves once the store can be used (reached, its schema migrated); start-up waits for it and stops when it rejects. */
  ready(): Promise<void>;
  /** Resolves when the store answers now, quickly (GET /ready); rejects with a PicoclawError saying why it does not. */
  probe(): Promise<void>;
  /** Ends it, after the ports above were closed (the pool's connections go). */
  close(): Promise<void>;
}
