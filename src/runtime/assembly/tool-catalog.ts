import type { AgentDefinition } from "../../agents/agent.js";
import { ConfigError } from "../../errors.js";
import { type AnyTool, ToolRegistry } from "../../tools/registry.js";

type Form = (tool: AnyTool, agent: AgentDefinition) => AnyTool | undefined;

/**
 * Every tool the features contributed: the registry (unique names), where
 * each came from, and the feature hook that picks the form of a tool a
 * given agent gets (the todo tool's style).
 */
export class ToolCatalog {
  readonly registry = new ToolRegistry();
  private readonly origins = new Map<string, string>();
  private readonly forms = new Map<string, Form>();

  /** Adds tools; a name already taken stops start-up, naming both owners. */
  addAll(tools: readonly AnyTool[], origin: (name: string) => string, form?: Form): void {
    const clashes: string[] = [];
    for (const tool of tools) {
      const owner = this.origins.get(tool.name);
      if (owner !== undefined) {
        clashes.push(`tool "${tool.name}" from ${origin(tool.name)} clashes with the tool of that name from ${owner}`);
        continue;
      }
      this.registry.add(tool);
      this.origins.set(tool.name, origin(tool.name));
      if (form) this.forms.set(tool.name, form);
    }
    if (clashes.length > 0) throw new ConfigError(clashes);
  }

  originOf(name: string): string | undefined {
    return this.origins.get(name);
  }

  /** The form of `tool` that `agent` gets, or undefined when it is not offered to that agent. */
  formFor(tool: AnyTool, agent: AgentDefinition): AnyTool | undefined {
    const form = this.forms.get(tool.name);
    return form ? form(tool, agent) : tool;
  }
}
