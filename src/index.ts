/** The public API of picoclaw-ts: what embedders and tool authors use. */
export { loadConfig, type LoadedConfig, type LoadConfigOptions } from "./config/load.js";
export { configSchema, type Config, type ModelEntry } from "./config/schema.js";
export { bootstrap } from "./bootstrap.js";
export { createApp } from "./gateway/app.js";
export { startGateway, type RunningGateway } from "./gateway/server.js";
export { Runtime, type RuntimeOptions, type MessageOutcome } from "./runtime/runtime.js";
export { EventBus, type RuntimeEvents } from "./runtime/events.js";
export { SessionState, type SessionScoped, type ClearReason } from "./runtime/session-state.js";
export { isSubagentKey, parentKey, depth, parseSessionKey, sessionKeyFor } from "./runtime/session-key.js";
export { defineTool, toolResult, type Tool, type ToolContext, type ToolResult } from "./tools/tool.js";
export type { ModelProvider, ModelRequest, ModelResponse, ModelDelta } from "./models/provider.js";
export type { ChatMessage, ToolCall, ToolSpec } from "./models/message.js";
export {
  PicoclawError,
  ConfigError,
  ModelError,
  RequestError,
  AbortedError,
} from "./errors.js";
