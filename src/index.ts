/**
 * `picoclaw-ts`: what a tool author needs, and nothing else.
 *
 *   import { defineTool, toolResult, z } from "picoclaw-ts";
 *
 * Embedders use `picoclaw-ts/runtime`; tests of agents and tools can use
 * the offline scripted model from `picoclaw-ts/testing`.
 */
export { z } from "zod";
export { defineTool, toolResult, type Tool, type ToolContext, type ToolResult, type ToolState } from "./tools/tool.js";
