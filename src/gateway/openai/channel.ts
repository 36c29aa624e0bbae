/** The channel part of the session keys of the OpenAI-compatible route (`agent:<agent>:openai:<id>`); a file of its own, so naming it loads nothing of the gateway. */
export const OPENAI_CHANNEL = "openai";
