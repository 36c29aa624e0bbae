import type { AgentDefinition } from "../../agents/agent.js";
import type { Config } from "../../config/schema.js";
import { compilePatterns } from "../../workspace/allowed-paths.js";
import { Workspace, WorkspaceError } from "../../workspace/workspace.js";

/**
 * Each agent's workspace, opened on first use and shared by the agents whose
 * folder it is, with the config's policy (restrict_to_workspace,
 * allow_read_outside_workspace, tools.allow_read_paths / allow_write_paths).
 */
export class AgentWorkspaces {
  private readonly opened = new Map<string, Promise<Workspace>>();
  private readPaths: RegExp[];
  private readonly writePaths: RegExp[];

  constructor(private readonly config: Config) {
    this.readPaths = compilePatterns(config.tools.allow_read_paths);
    this.writePaths = compilePatterns(config.tools.allow_write_paths);
  }

  /** Folders every agent may read besides its workspace (the features' `readPaths`); before any workspace is opened. */
  allowRead(folders: readonly string[]): void {
    if (this.opened.size > 0) throw new Error("allowRead must come before a workspace is opened");
    const escaped = (folder: string) => folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    this.readPaths = [...this.readPaths, ...folders.map((folder) => new RegExp(`^${escaped(folder.replace(/\/+$/, ""))}(?:/|$)`))];
  }

  of(agent: AgentDefinition): Promise<Workspace> {
    const root = agent.workspace;
    if (root === undefined) return Promise.reject(new WorkspaceError(`agent "${agent.id}" has no workspace`));
    let found = this.opened.get(root);
    if (!found) {
      const { restrict_to_workspace, allow_read_outside_workspace } = this.config.agents.defaults;
      found = Workspace.open({
        root,
        restrict: restrict_to_workspace,
        readOutside: allow_read_outside_workspace,
        readPaths: this.readPaths,
        writePaths: this.writePaths,
      });
      this.opened.set(root, found);
      // A folder that could not be made is tried again next time.
      found.catch(() => this.opened.delete(root));
    }
    return found;
  }
}
