import type { ApprovalPolicy } from "../config/schema.js";

/** One agent, as its `agents/<id>/AGENT.md` defines it. */
export interface AgentDefinition {
  /** The folder name. */
  id: string;
  name: string;
  description: string;
  /** A model_name from model_list, or undefined for `agents.defaults.model_name`. */
  model: string | undefined;
  /** The tool allowlist: null when absent (every enabled tool), [] for none. */
  tools: readonly string[] | null;
  /** Agents this one may delegate to or spawn as (`"*"` for any); empty: none. */
  allowAgents: readonly string[];
  /** Its workspace folder (absolute): AGENT.md `workspace:`, else `agents.defaults.workspace`; undefined for an agent made without one (tests). */
  workspace?: string;
  /** AGENT.md `approval:`: the approval policy of some of its tools, over the config's (tools.<key>.approval). */
  approval?: Readonly<Record<string, ApprovalPolicy>>;
  /** Frontmatter keys that features read (`todo_style`...), validated by the feature's schema. */
  settings: Readonly<Record<string, unknown>>;
  /** The body of AGENT.md: the system prompt. */
  prompt: string;
  /** The file it came from (for messages). */
  file: string;
}
