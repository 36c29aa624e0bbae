import path from "node:path";
import { MemoryHistoryStore } from "./history.js";
import { JsonlHistoryStore } from "./jsonl-store.js";
import type { SessionStoreAdapter } from "./store.js";

/**
 * The session stores the gateway ships, as they register (store.ts). A new
 * store is an adapter (its folder) and one line in BUILTIN_STORES.
 */

/** Histories in memory only, bounded, gone with the process. */
export const memoryStore: SessionStoreAdapter = {
  type: "memory",
  description: "histories live in memory only and end with the process",
  open: ({ config }) => ({
    history: new MemoryHistoryStore({
      maxMessages: config.agents.defaults.max_history_messages,
      maxBytes: config.agents.defaults.max_history_bytes,
      maxSessions: config.session.max_sessions,
      maxTotalBytes: config.session.max_bytes,
    }),
  }),
};

/** Every root session's history in a JSONL file of session.dir (opened and locked for this process). */
export const jsonlStore: SessionStoreAdapter = {
  type: "jsonl",
  description: "every root session's history is kept in session.dir (a JSONL file per session) and survives restarts",
  open: ({ config, baseDir, logger }) => ({
    history: JsonlHistoryStore.open({
      dir: path.resolve(baseDir, config.session.dir),
      maxMessages: config.agents.defaults.max_history_messages,
      maxBytes: config.agents.defaults.max_history_bytes,
      maxSessions: config.session.max_sessions,
      maxTotalBytes: config.session.max_bytes,
      maxStored: config.session.max_stored,
      warn: (message) => logger.warn(message),
    }),
  }),
};

export const BUILTIN_STORES: readonly SessionStoreAdapter[] = [jsonlStore, memoryStore];
