import type { Config } from "../config/schema.js";
import type { StateLimits } from "./feature-state.js";
import type { SessionCacheOptions } from "./session-cache.js";

/**
 * Sessions held in memory when `session.max_sessions` is not set. A store
 * that keeps them elsewhere (a file, a table) reads an evicted one back
 * when it is used again, so it keeps only the sessions used lately: each
 * costs about a kilobyte of heap, and ten thousand of them were most of
 * what a busy gateway's memory grew by. The memory store forgets what it
 * evicts, so it keeps more.
 */
export const DEFAULT_MAX_SESSIONS = { kept: 1_000, memory: 10_000 } as const;

/** What the config bounds a session's history by, and all of them together. */
export const historyLimits = (config: Config): Required<Omit<SessionCacheOptions, "now">> => ({
  maxMessages: config.agents.defaults.max_history_messages,
  maxBytes: config.agents.defaults.max_history_bytes,
  maxSessions: config.session.max_sessions ?? (config.session.store === "memory" ? DEFAULT_MAX_SESSIONS.memory : DEFAULT_MAX_SESSIONS.kept),
  maxTotalBytes: config.session.max_bytes,
});

/** What the config bounds one feature's durable state by. */
export const stateLimits = (config: Config): StateLimits => ({ maxKeys: config.session.state_max_keys, maxBytes: config.session.state_max_bytes });
