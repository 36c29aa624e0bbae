import type { StoreOption } from "../config/layout.js";
import type { Config } from "../config/schema.js";
import type { Logger } from "../log.js";
import type { HistoryStore } from "./history.js";

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

/** What a store implements: where histories are kept. */
export interface SessionPorts {
  history: HistoryStore;
}
