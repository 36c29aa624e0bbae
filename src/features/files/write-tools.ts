import { z } from "zod";
import { formatBytes } from "../../bytes.js";
import { type Tool, defineTool, toolResult } from "../../tools/tool.js";
import type { Workspace } from "../../workspace/workspace.js";
import { refusal } from "./refusal.js";

type WorkspaceOf = (agentId: string) => Promise<Workspace>;

const ESCAPING = "Standard JSON escaping applies: \\n for newline and \\\\n for literal backslash-n.";

const tooLarge = (bytes: number, key: string, max: number) =>
  toolResult.error(`content is ${formatBytes(bytes)}, more than ${key} allows (${formatBytes(max)}); write it in parts (append_file)`);

/** `write_file`: a whole file, written atomically; an existing file only with `overwrite`. Its result is silent. */
export function writeFileTool(workspaceOf: WorkspaceOf, maxBytes: number): Tool {
  return defineTool({
    name: "write_file",
    description:
      "Write content to a file. Content is written byte-for-byte after argument decoding. Standard JSON escaping applies: \\n for newline and \\\\n for a literal backslash-n sequence. If the file already exists, you must set overwrite=true to replace it.",
    parameters: z.strictObject({
      path: z.string().describe("Path to the file to write"),
      content: z.string().describe(`Content to write to the file. ${ESCAPING}`),
      overwrite: z.boolean().optional().describe("Must be set to true to overwrite an existing file."),
    }),
    enabledByDefault: true,
    execute: async (args, ctx) => {
      const bytes = Buffer.byteLength(args.content, "utf8");
      if (bytes > maxBytes) return tooLarge(bytes, "tools.write_file.max_bytes", maxBytes);
      try {
        await (await workspaceOf(ctx.agentId)).write(args.path, args.content, args.overwrite === true ? "replace" : "create");
        return toolResult.silent(`File written: ${args.path}`);
      } catch (error) {
        return refusal(error);
      }
    },
  });
}

/** `append_file`: content added at the end of a file (made when missing). Its result is silent. */
export function appendFileTool(workspaceOf: WorkspaceOf, maxBytes: number): Tool {
  return defineTool({
    name: "append_file",
    description: `Append content to the end of a file. ${ESCAPING}`,
    parameters: z.strictObject({
      path: z.string().describe("The file path to append to"),
      content: z.string().describe(`The content to append. ${ESCAPING}`),
    }),
    enabledByDefault: true,
    execute: async (args, ctx) => {
      const bytes = Buffer.byteLength(args.content, "utf8");
      if (bytes > maxBytes) return tooLarge(bytes, "tools.append_file.max_bytes", maxBytes);
      try {
        await (await workspaceOf(ctx.agentId)).append(args.path, args.content);
        return toolResult.silent(`Appended to ${args.path}`);
      } catch (error) {
        return refusal(error);
      }
    },
  });
}
