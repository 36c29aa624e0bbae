/** A model entry's name (`model_list[].model_name`), as agents and fallbacks refer to it. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** An agent's id: its folder's name under agents/, and part of its session keys. */
export const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
