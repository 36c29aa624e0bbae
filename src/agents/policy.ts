import { type ToolSwitch, type ToolSwitchSources, toolVariableName } from "../config/env.js";
import { CORE_TOOLS_KEYS, type ToolsConfig } from "../config/schema.js";
import type { Redact } from "../tools/redact.js";
import type { Approval } from "../tools/approval.js";
import type { AnyTool, ToolRegistry } from "../tools/registry.js";
import { DEFAULT_TOOL_TIMEOUT_MS, ToolSet } from "../tools/tool-set.js";
import type { ToolStates } from "../tools/tool-states.js";
import type { AgentDefinition } from "./agent.js";

export interface ToolPolicyOptions {
  now?: () => number;
  /** Where tools keep per-session state (`ctx.state`). */
  state?: ToolStates;
  /** `PICOCLAW_TOOLS_<NAME>_ENABLED` for tools that are not built in; they win over the file. */
  switches?: readonly ToolSwitch[];
  /** The form of a tool an agent gets (the todo tool's style), or undefined when the agent is not offered it at all. */
  variant?: (tool: AnyTool, agent: AgentDefinition) => AnyTool | undefined;
  /** Scrubs configured secrets from every tool result. */
  redact?: Redact;
  /** Keys of `tools` that are no tool's section (`max_result_bytes`, `mcp`...): never warned about. */
  reserved?: readonly string[];
  /** Where the sections' `enabled` came from (the loader knows); without it, a value unlike the tool's default is taken for the config's. */
  sources?: ToolSwitchSources;
  /** Whether a tool of this name (or a variable's spelling of it) may arrive after start-up (an MCP server's, once it connects): config naming it is not warned about. */
  arrivesLater?: (name: string) => boolean;
}

/** Whether a tool is on, and what says so: its own default, the config file, or an environment variable (named). */
export interface ToolState {
  enabled: boolean;
  source: "default" | "config" | "env";
  /** The variable, when `source` is `env`. */
  variable?: string;
}

type Section = { enabled?: boolean; timeout_ms?: number; approval?: Approval };

function sectionOf(tools: ToolsConfig, name: string): Section | undefined {
  return (tools as unknown as Record<string, Section | undefined>)[name];
}

/** The time limit of one call in ms (0: none): tools.<name>.timeout_ms, else the tool's own, else 60 s. */
export function toolTimeoutMs(tools: ToolsConfig, tool: Pick<AnyTool, "name" | "timeoutMs">): number {
  return sectionOf(tools, tool.name)?.timeout_ms ?? tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
}

/** The config key whose value `toolTimeoutMs` gave (the one a user changes to give the tool more time). */
export function toolTimeoutSetting(tools: ToolsConfig, tool: Pick<AnyTool, "name" | "timeoutSetting">): string {
  if (sectionOf(tools, tool.name)?.timeout_ms !== undefined) return `tools.${tool.name}.timeout_ms`;
  return tool.timeoutSetting ?? `tools.${tool.name}.timeout_ms`;
}

/**
 * The one effective-tool policy: a tool is effective for an agent when the
 * config enables it (tools.<name>.enabled, else the tool's own default) AND
 * the agent's AGENT.md allowlist names it (no allowlist: every enabled tool).
 * What the model is shown and what may run both come from `toolSet`.
 * `PICOCLAW_TOOLS_<NAME>_ENABLED` wins over the file for every tool. Its
 * approval policy (`approvalOf`) hides a `deny` tool here too, and marks
 * the calls of an `ask` one to wait for a person.
 */
export class ToolPolicy {
  private readonly sets = new Map<string, ToolSet>();
  /** Switches written to the config file while the gateway runs (the web tool library): they win over the file as it was read. */
  private readonly written = new Map<string, boolean>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly tools: ToolsConfig,
    private readonly opts: ToolPolicyOptions = {},
  ) {}

  private section(name: string): Section | undefined {
    return sectionOf(this.tools, name);
  }

  private switchFor(tool: AnyTool): ToolSwitch | undefined {
    const spelled = toolVariableName(tool.name);
    return this.opts.switches?.find((s) => s.tool === spelled);
  }

  isEnabled(tool: AnyTool): boolean {
    return this.stateOf(tool).enabled;
  }

  /** Whether the tool is on, and what decides it: a variable, then what was written to the file since start, then the file, then the tool's default. */
  stateOf(tool: AnyTool): ToolState {
    const own = this.switchFor(tool);
    if (own) return { enabled: own.enabled, source: "env", variable: own.variable };
    const section = this.section(tool.name)?.enabled;
    const fallback = tool.enabledByDefault ?? false;
    const variable = this.opts.sources?.fromEnv.get(tool.name);
    if (variable !== undefined) return { enabled: section ?? fallback, source: "env", variable };
    const written = this.written.get(tool.name);
    if (written !== undefined) return { enabled: written, source: "config" };
    if (section === undefined) return { enabled: fallback, source: "default" };
    const inFile = this.opts.sources ? this.opts.sources.inFile.has(tool.name) : section !== fallback;
    return { enabled: section, source: inFile ? "config" : "default" };
  }

  /**
   * Switches a tool on or off from the next tool set on (the config file
   * was written already: the web tool library). A variable's switch still
   * wins: the caller refuses those first.
   */
  setEnabled(name: string, enabled: boolean): void {
    this.written.set(name, enabled);
    this.refresh();
  }

  timeoutMs(tool: AnyTool): number {
    return toolTimeoutMs(this.tools, tool);
  }

  /** The tool's approval policy for the agent: AGENT.md `approval:`, else tools.<name>.approval, else the tool's own, else allow. */
  approvalOf(tool: Pick<AnyTool, "name" | "defaultApproval">, agent: AgentDefinition): Approval {
    return agent.approval?.[tool.name] ?? this.configuredApproval(tool);
  }

  /** The tool's approval policy before any agent's own: tools.<name>.approval, else the tool's own, else allow. */
  configuredApproval(tool: Pick<AnyTool, "name" | "defaultApproval">): Approval {
    return this.section(tool.name)?.approval ?? tool.defaultApproval ?? "allow";
  }

  /** Forgets the tool sets made so far (after tools were added to the registry). */
  refresh(): void {
    this.sets.clear();
  }

  /** The agent's tools; in a subagent's session, without those only a user's own session offers. */
  effectiveTools(agent: AgentDefinition, inSubagent = false): AnyTool[] {
    const allow = agent.tools === null ? null : new Set(agent.tools);
    const variant = this.opts.variant ?? ((tool) => tool);
    return this.registry
      .all()
      .filter(
        (tool) =>
          this.isEnabled(tool) &&
          (allow === null || allow.has(tool.name)) &&
          !(inSubagent && tool.notInSubagents) &&
          // A denied tool is hidden like one the allowlist leaves out: the model is never shown it.
          this.approvalOf(tool, agent) !== "deny",
      )
      .flatMap((tool) => variant(tool, agent) ?? []);
  }

  /** Names, sorted. */
  effectiveToolNames(agent: AgentDefinition): string[] {
    return this.effectiveTools(agent).map((t) => t.name);
  }

  toolSet(agent: AgentDefinition, inSubagent = false): ToolSet {
    const key = inSubagent ? `${agent.id}\u0000subagent` : agent.id;
    let set = this.sets.get(key);
    if (!set) {
      const tools = this.effectiveTools(agent, inSubagent);
      set = new ToolSet(tools, {
        asks: new Set(tools.filter((tool) => this.approvalOf(tool, agent) === "ask").map((tool) => tool.name)),
        ...(this.opts.now ? { now: this.opts.now } : {}),
        ...(this.opts.state ? { state: this.opts.state } : {}),
        timeoutMs: (tool) => this.timeoutMs(tool),
        timeoutSetting: (tool) => toolTimeoutSetting(this.tools, tool),
        ...(this.tools.max_result_bytes === undefined ? {} : { maxResultBytes: this.tools.max_result_bytes }),
        ...(this.opts.redact ? { redact: this.opts.redact } : {}),
      });
      this.sets.set(key, set);
    }
    return set;
  }

  /** Warnings for tool sections and tool variables that name no tool the gateway has. */
  configWarnings(): string[] {
    const warnings: string[] = [];
    const later = this.opts.arrivesLater ?? (() => false);
    for (const name of Object.keys(this.tools)) {
      if ((this.opts.reserved ?? CORE_TOOLS_KEYS).includes(name) || this.registry.get(name) || later(name)) continue;
      warnings.push(`tools.${name}: there is no tool named "${name}"; this section does nothing`);
    }
    const spelled = new Set(this.registry.names().map(toolVariableName));
    for (const s of this.opts.switches ?? []) {
      if (!spelled.has(s.tool) && !later(s.tool)) warnings.push(`${s.variable}: there is no tool named "${s.tool}"; ignored`);
    }
    return warnings;
  }

  /** A warning for each allowlisted name that is not a known tool (not an error, by design). */
  allowlistWarnings(agents: Iterable<AgentDefinition>): string[] {
    const warnings: string[] = [];
    for (const agent of agents) {
      for (const name of agent.tools ?? []) {
        if (!this.registry.get(name) && !this.opts.arrivesLater?.(name))
          warnings.push(`${agent.file}: tools lists "${name}", which is not a known tool; ignored`);
      }
    }
    return warnings;
  }
}
