import { TOOL_NAME } from "../../tools/tool.js";

/**
 * The gateway's name for tool `tool` of MCP server `server`:
 * `mcp_<server>_<tool>`, every character outside `[A-Za-z0-9_-]` replaced
 * by `_`. The result may be longer than 64 characters; `isUsableToolName`
 * says whether it can be registered.
 */
export function mcpToolName(server: string, tool: string): string {
  return `mcp_${sanitise(server)}_${sanitise(tool)}`;
}

export function isUsableToolName(name: string): boolean {
  return TOOL_NAME.test(name);
}

function sanitise(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/gu, "_");
}
