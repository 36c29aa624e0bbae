import path from "node:path";
import { MemoryFeatureState } from "./feature-state.js";
import { JsonlFeatureState } from "./jsonl/jsonl-state.js";
import { JsonlHistoryStore } from "./jsonl/jsonl-store.js";
import { MemoryHistoryStore } from "./memory-history.js";
import { historyLimits, stateLimits } from "./limits.js";
import { postgresStore } from "./postgres/postgres-store.js";
import type { SessionStoreAdapter } from "./store.js";

/**
 * The session stores the gateway ships, as they register (store.ts). A new
 * store is an adapter (its folder) and one line in BUILTIN_STORES.
 */

/** Histories and feature state in memory only, bounded, gone with the process. */
export const memoryStore: SessionStoreAdapter = {
  type: "memory",
  description: "histories and feature state live in memory only and end with the process",
  open: ({ config }) => ({ history: new MemoryHistoryStore(historyLimits(config)), state: new MemoryFeatureState(stateLimits(config)) }),
};

/** Every root session's history in a JSONL file of session.dir (opened and locked for this process), feature state in its state/ files. */
export const jsonlStore: SessionStoreAdapter = {
  type: "jsonl",
  description:
    "every root session's history is kept in session.dir (a JSONL file per session) and features' state in session.dir/state/; both survive restarts",
  open: ({ config, baseDir, logger }) => {
    const dir = path.resolve(baseDir, config.session.dir);
    const history = JsonlHistoryStore.open({
      dir,
      ...historyLimits(config),
      maxStored: config.session.max_stored,
      maxStoredBytes: config.session.max_stored_bytes,
      maxDiskReads: config.session.max_disk_reads,
      warn: (message) => logger.warn(message),
    });
    return { history, state: new JsonlFeatureState(dir, stateLimits(config)) };
  },
};

export const BUILTIN_STORES: readonly SessionStoreAdapter[] = [jsonlStore, memoryStore, postgresStore];
