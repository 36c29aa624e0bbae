import { z } from "zod";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import type { Workspace } from "../../workspace/workspace.js";
import { refusal } from "./refusal.js";

/** `list_dir`: one folder's entries by name, PicoClaw's `DIR:  name` / `FILE: name` lines, at most `max_entries`. */
export function listDirTool(workspaceOf: (agentId: string) => Promise<Workspace>, maxEntries: number): Tool {
  return defineTool({
    name: "list_dir",
    description: "List files and directories in a path",
    parameters: z.strictObject({ path: z.string().describe("Path to list") }),
    enabledByDefault: true,
    execute: async (args, ctx) => {
      try {
        const entries = await (await workspaceOf(ctx.agentId)).list(args.path);
        // Never an empty answer: a model that gets nothing back asks again.
        if (entries.length === 0) return toolResult.text("(empty directory)");
        const shown = entries.slice(0, maxEntries).map((entry) => (entry.dir ? `DIR:  ${entry.name}\n` : `FILE: ${entry.name}\n`));
        const more = entries.length - shown.length;
        return toolResult.text(shown.join("") + (more > 0 ? `[... ${more} more entries not listed (tools.list_dir.max_entries)]\n` : ""));
      } catch (error) {
        return refusal(error);
      }
    },
  });
}
