/**
 * The public API of picoclaw-ts: what tool authors and embedders use.
 *
 * A tool module (listed in `tools.plugins`) needs only:
 *   import { defineTool, toolResult, z } from "picoclaw-ts";
 */
export { z } from "zod";
export {
  defineTool,
  toolResult,
  type Tool,
  type ToolContext,
  type ToolResult,
  type ToolState,
} from "./tools/tool.js";
export { SessionState, type SessionScoped, type ClearReason } from "./runtime/session-state.js";
export { EventBus, type RuntimeEvents } from "./runtime/events.js";
export { isSubagentKey, parentKey, depth, rootKey, parseSessionKey, sessionKeyFor } from "./runtime/session-key.js";

export { loadConfig, type LoadedConfig, type LoadConfigOptions } from "./config/load.js";
export { configSchema, type Config, type ModelEntry } from "./config/schema.js";
export { bootstrap, prepare, type Bootstrapped } from "./bootstrap.js";
export { createApp } from "./gateway/app.js";
export { startGateway, type RunningGateway } from "./gateway/server.js";
export { Runtime, type RuntimeOptions, type MessageOutcome } from "./runtime/runtime.js";
export type { ModelProvider, ModelRequest, ModelResponse, ModelDelta } from "./models/provider.js";
export type { ChatMessage, ToolCall, ToolSpec } from "./models/message.js";
export { PicoclawError, ConfigError, ModelError, RequestError, AbortedError } from "./errors.js";
