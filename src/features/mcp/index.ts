export { McpHub, type McpHubOptions, type McpServerStatus, type McpStartReport, type McpToolsChange } from "./hub.js";
export { McpTool } from "./tool.js";
export { mcpToolName } from "./names.js";
