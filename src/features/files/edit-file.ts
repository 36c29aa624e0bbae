import { z } from "zod";
import { formatBytes } from "../../bytes.js";
import { type Tool, type ToolResult, defineTool, toolResult } from "../../tools/tool.js";
import type { Workspace } from "../../workspace/workspace.js";
import { looksBinary } from "./binary.js";
import { editResult } from "./diff-result.js";
import { refusal } from "./refusal.js";

const ESCAPING = "Standard JSON escaping applies: \\n for newline and \\\\n for literal backslash-n.";

/**
 * `edit_file`: replaces one exact, case-sensitive occurrence of `old_text`;
 * none, or more than one, is an error the model can act on (PicoClaw's
 * texts). The file is written back atomically; the user sees the change
 * as a unified diff.
 */
export function editFileTool(workspaceOf: (agentId: string) => Promise<Workspace>, maxFileBytes: number): Tool {
  return defineTool({
    name: "edit_file",
    description: `Edit a file by replacing old_text with new_text. The old_text must exist exactly in the file. ${ESCAPING}`,
    parameters: z.strictObject({
      path: z.string().describe("The file path to edit"),
      old_text: z.string().describe(`The exact text to find and replace. ${ESCAPING}`),
      new_text: z.string().describe(`The text to replace with. ${ESCAPING}`),
    }),
    enabledByDefault: true,
    execute: async (args, ctx): Promise<ToolResult> => {
      if (args.old_text === "") return toolResult.error("old_text must not be empty; give the exact text to replace");
      try {
        const workspace = await workspaceOf(ctx.agentId);
        const file = await workspace.openFile(args.path);
        let before: Buffer;
        try {
          if (file.size > maxFileBytes) {
            return toolResult.error(
              `${args.path} is ${formatBytes(file.size)}, more than tools.edit_file.max_file_bytes (${formatBytes(maxFileBytes)}); edit a smaller file, or rewrite it with write_file`,
            );
          }
          before = await file.handle.readFile();
        } finally {
          await file.handle.close();
        }
        if (looksBinary(before)) return toolResult.error("file appears to be binary; edit_file edits text files only");
        const text = before.toString("utf8");
        const count = text.split(args.old_text).length - 1;
        if (count === 0) return toolResult.error("old_text not found in file. Make sure it matches exactly");
        if (count > 1) return toolResult.error(`old_text appears ${count} times. Please provide more context to make it unique`);
        const after = text.replace(args.old_text, () => args.new_text);
        await workspace.write(args.path, after, "replace");
        return await editResult(args.path, text, after);
      } catch (error) {
        return refusal(error);
      }
    },
  });
}
