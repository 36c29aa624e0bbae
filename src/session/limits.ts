import { type Config, defaultMaxSessions } from "../config/schema.js";
import type { StateLimits } from "./feature-state.js";
import type { SessionCacheOptions } from "./session-cache.js";

/** What the config bounds a session's history by, and all of them together. */
export const historyLimits = (config: Config): Required<Omit<SessionCacheOptions, "now">> => ({
  maxMessages: config.agents.defaults.max_history_messages,
  maxBytes: config.agents.defaults.max_history_bytes,
  maxSessions: config.session.max_sessions ?? defaultMaxSessions(config.session.store),
  maxTotalBytes: config.session.max_bytes,
});

/** What the config bounds one feature's durable state by. */
export const stateLimits = (config: Config): StateLimits => ({ maxKeys: config.session.state_max_keys, maxBytes: config.session.state_max_bytes });
