import type { ToolsConfig } from "../config/schema.js";
import { type AnyTool, type ToolRegistry, ToolSet } from "../tools/registry.js";
import type { AgentDefinition } from "./agent.js";

/**
 * The one effective-tool policy: a tool is effective for an agent when the
 * config enables it (tools.<name>.enabled, else the tool's own default) AND
 * the agent's AGENT.md allowlist names it (no allowlist: every enabled tool).
 * What the model is shown and what may run both come from `toolSet`.
 */
export class ToolPolicy {
  private readonly sets = new Map<string, ToolSet>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly tools: ToolsConfig,
    private readonly now: () => number = Date.now,
  ) {}

  isEnabled(tool: AnyTool): boolean {
    const section = (this.tools as Record<string, { enabled?: boolean } | undefined>)[tool.name];
    return section?.enabled ?? tool.enabledByDefault ?? false;
  }

  effectiveTools(agent: Pick<AgentDefinition, "tools">): AnyTool[] {
    const allow = agent.tools === null ? null : new Set(agent.tools);
    return this.registry.all().filter((tool) => this.isEnabled(tool) && (allow === null || allow.has(tool.name)));
  }

  /** Names, sorted. */
  effectiveToolNames(agent: Pick<AgentDefinition, "tools">): string[] {
    return this.effectiveTools(agent).map((t) => t.name);
  }

  toolSet(agent: AgentDefinition): ToolSet {
    let set = this.sets.get(agent.id);
    if (!set) this.sets.set(agent.id, (set = new ToolSet(this.effectiveTools(agent), this.now)));
    return set;
  }

  /** A warning for each allowlisted name that is not a known tool (not an error: CONTRACT §3). */
  allowlistWarnings(agents: Iterable<AgentDefinition>): string[] {
    const warnings: string[] = [];
    for (const agent of agents) {
      for (const name of agent.tools ?? []) {
        if (!this.registry.get(name)) warnings.push(`${agent.file}: tools lists "${name}", which is not a known tool; ignored`);
      }
    }
    return warnings;
  }
}
