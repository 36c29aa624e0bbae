import type { Config } from "../config/schema.js";
import type { AgentDefinition } from "./agent.js";
import type { ToolPolicy } from "./policy.js";

/** An agent as `GET /v1/agents` and `picoclaw agents` show it. */
export interface AgentSummary {
  id: string;
  name: string;
  description: string;
  model: string;
  /** The provider of its model's entry (`builtin`, `openai`, `anthropic`...): the chat page greets a built-in model with things to try. */
  provider: string;
  /** Effective tools, sorted. */
  tools: string[];
}

export function agentSummaries(
  agents: ReadonlyMap<string, AgentDefinition>,
  policy: ToolPolicy,
  modelOf: (agent: AgentDefinition) => string,
  providerOf: (model: string) => string,
): AgentSummary[] {
  return [...agents.values()]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((agent) => ({
      id: agent.id,
      name: agent.name,
      description: agent.description,
      model: modelOf(agent),
      provider: providerOf(modelOf(agent)),
      tools: policy.effectiveToolNames(agent),
    }));
}

/** What AGENT.md files name that does not exist: tools (allowlists), models, other agents (allow_agents). */
export function agentWarnings(agents: ReadonlyMap<string, AgentDefinition>, policy: ToolPolicy, config: Config): string[] {
  const warnings = policy.allowlistWarnings(agents.values());
  const models = new Set(config.model_list.map((m) => m.model_name));
  for (const agent of agents.values()) {
    if (agent.model !== undefined && !models.has(agent.model)) {
      warnings.push(`${agent.file}: model "${agent.model}" is not a model_name in model_list; its turns will fail`);
    }
    for (const other of agent.allowAgents) {
      if (other !== "*" && !agents.has(other)) warnings.push(`${agent.file}: allow_agents lists "${other}", which is not an agent`);
    }
  }
  return warnings;
}
