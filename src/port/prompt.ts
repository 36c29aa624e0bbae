import type { AgentDefinition } from "../agents/agent.js";

/**
 * A section a feature adds to the system prompt of every turn, after the
 * AGENT.md body: the skills an agent has, its memory, its workspace's
 * files. Sections come in the order of the features, each under a bound.
 * A turn asks every section for its text at once and waits for them
 * together, so a section must not count on another having been asked first.
 *
 * A provider's prompt caching hits only while the prompt stays the same,
 * so a section's text must change only when what it shows changes: no
 * clock, counter or random id in it. What changes every turn does not
 * belong here (the todo plan reaches the model when it calls the tool,
 * never in every prompt).
 */
export interface PromptSection {
  /** Names it in messages and in the note of a section cut to fit (`skills`, `memory`). */
  readonly name: string;
  /** UTF-8 bytes its text may take, at most MAX_SECTION_BYTES; a longer text is cut at a line, with a note saying so. */
  readonly maxBytes: number;
  /** Its text for a turn of `agent` in `sessionKey` (sub-turns too), or undefined or "" for none. */
  text(turn: PromptTurn): string | undefined | Promise<string | undefined>;
}

export interface PromptTurn {
  readonly agent: AgentDefinition;
  readonly sessionKey: string;
  readonly signal: AbortSignal;
}

/** The most one section may take: its `maxBytes` may not be more. */
export const MAX_SECTION_BYTES = 64 * 1024;
