import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { AGENT_ID } from "../config/schema.js";
import type { AgentDefinition } from "./agent.js";
import { type FrontmatterKeys, parseAgentFile } from "./frontmatter.js";

export const AGENT_FILE = "AGENT.md";

/** Every agent found under a folder, by id, plus warnings for what was skipped or doubtful. */
export interface AgentCatalog {
  agents: ReadonlyMap<string, AgentDefinition>;
  warnings: string[];
}

/** Where relative workspace paths resolve, and the default one (agents.defaults.workspace). */
export interface WorkspaceDefaults {
  baseDir: string;
  workspace: string;
  /** The home folder `~` stands for. */
  home?: string | undefined;
}

/** An agent's workspace folder, absolute: `~` is the home folder, a relative path is under `baseDir`. */
export function workspacePath(written: string, defaults: Pick<WorkspaceDefaults, "baseDir" | "home">): string {
  const home = defaults.home;
  const expanded = home && (written === "~" || written.startsWith("~/")) ? path.join(home, written.slice(1)) : written;
  return path.resolve(defaults.baseDir, expanded);
}

/**
 * Reads `<dir>/<id>/AGENT.md` for every sub-folder. A folder whose name is not
 * a valid id, or that has no AGENT.md, is skipped with a warning. Frontmatter
 * that does not parse loads the agent with NO tools (fail closed) and a
 * warning naming the file; nothing here throws for a bad agent. When the
 * folder defines no agent, the default workspace's AGENT.md is agent
 * `main` (PicoClaw's layout).
 */
export function loadAgentCatalog(dir: string, extra: FrontmatterKeys = {}, workspaces?: WorkspaceDefaults): AgentCatalog {
  const catalog = agentsFolder(dir, extra, workspaces);
  if (catalog.agents.size > 0 || !workspaces) return catalog;
  // PicoClaw's single agent: the default workspace's AGENT.md (or its older AGENTS.md) is agent "main".
  const workspace = workspacePath(workspaces.workspace, workspaces);
  const file = [AGENT_FILE, LEGACY_AGENT_FILE].map((name) => path.join(workspace, name)).find((candidate) => existsSync(candidate));
  if (!file) return catalog;
  const { agent, warnings } = readAgent(WORKSPACE_AGENT_ID, file, readFileSync(file, "utf8"), extra);
  agent.workspace = workspacePath(agent.workspace ?? workspaces.workspace, workspaces);
  return { agents: new Map([[WORKSPACE_AGENT_ID, agent]]), warnings: [...catalog.warnings.filter((w) => !w.endsWith(FOLDER_MISSING)), ...warnings] };
}

/** PicoClaw's older name of the workspace's agent file, read when there is no AGENT.md. */
const LEGACY_AGENT_FILE = "AGENTS.md";
/** The id of the workspace's own agent (PicoClaw's single agent). */
export const WORKSPACE_AGENT_ID = "main";
const FOLDER_MISSING = ": agents folder not found";

function agentsFolder(dir: string, extra: FrontmatterKeys, workspaces: WorkspaceDefaults | undefined): AgentCatalog {
  const agents = new Map<string, AgentDefinition>();
  const warnings: string[] = [];
  if (!existsSync(dir)) {
    warnings.push(`${dir}${FOLDER_MISSING}`);
    return { agents, warnings };
  }
  const names = readdirSync(dir).sort();
  for (const name of names) {
    const folder = path.join(dir, name);
    if (!statSync(folder).isDirectory()) continue;
    if (!AGENT_ID.test(name)) {
      warnings.push(`${folder}: "${name}" is not a valid agent id (lowercase letters, digits, _ and -, at most 64, starting with a letter or digit); skipped`);
      continue;
    }
    const file = path.join(folder, AGENT_FILE);
    if (!existsSync(file)) {
      warnings.push(`${folder}: no ${AGENT_FILE}; skipped`);
      continue;
    }
    const { agent, warnings: own } = readAgent(name, file, readFileSync(file, "utf8"), extra);
    if (workspaces) agent.workspace = workspacePath(agent.workspace ?? workspaces.workspace, workspaces);
    agents.set(name, agent);
    warnings.push(...own);
  }
  return { agents, warnings };
}

/** Builds one agent from the text of its AGENT.md. */
export function readAgent(id: string, file: string, text: string, extra: FrontmatterKeys = {}): { agent: AgentDefinition; warnings: string[] } {
  const parsed = parseAgentFile(text, extra);
  const warnings = parsed.notes.map((note) => `${file}: ${note}`);
  if (parsed.problems.length > 0) {
    warnings.push(`${file}: frontmatter does not parse, so agent "${id}" gets no tools: ${parsed.problems.join("; ")}`);
  }
  const fm = parsed.frontmatter;
  return {
    agent: {
      id,
      name: fm?.name ?? id,
      description: fm?.description ?? "",
      model: fm?.model,
      ...(fm?.workspace === undefined ? {} : { workspace: fm.workspace }),
      tools: fm === null ? [] : (fm.tools ?? null),
      allowAgents: fm?.allow_agents ?? [],
      ...(fm?.approval ? { approval: fm.approval } : {}),
      settings: fm?.settings ?? {},
      prompt: parsed.body,
      file,
    },
    warnings,
  };
}
