import { type ToolResult, toolResult } from "../../tools/tool.js";
import { WorkspaceError } from "../../workspace/workspace.js";

/** A path the workspace refused or could not use, as an error result the model can act on; anything else is thrown on. */
export function refusal(error: unknown): ToolResult {
  if (error instanceof WorkspaceError) return toolResult.error(error.message);
  throw error;
}
