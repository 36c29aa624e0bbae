/**
 * `picoclaw-ts/runtime`: for programs that embed the gateway. Load a config,
 * bootstrap a runtime (with features of your own, if you like), serve it
 * over HTTP or drive it through `handleMessage`.
 */
export { loadConfig, type LoadedConfig, type LoadConfigOptions } from "./config/load.js";
export { configSchema, type Config, type ModelEntry } from "./config/schema.js";
export { bootstrap, prepare, type Bootstrapped, type BootstrapOptions, type BuiltinFeatures } from "./bootstrap.js";
export { createApp, type AppOptions } from "./gateway/app.js";
export { startGateway, type GatewayOptions, type RunningGateway } from "./gateway/server.js";
export { Runtime } from "./runtime/runtime.js";
export type {
  RuntimeOptions,
  MessageInput,
  MessageOutcome,
  ConversationInput,
  ModelSource,
  ToolOverview,
  RuntimeStats,
  SessionSummary,
} from "./runtime/options.js";
export type { MessageEvent, MessageObserver } from "./runtime/streams/message-stream.js";
export type { Feature, FeatureHost, FeatureParts, Clock, Delivery } from "./port/feature.js";
export type { Command, CommandContext } from "./port/command.js";
export type { FeatureRoute, RouteRequest, RouteAnswer } from "./port/route.js";
export type { RuntimeEvents, EventScope, EventName } from "./port/events.js";
export { SessionState, type SessionScoped, type ClearReason } from "./session/state.js";
export type { HistoryStore, HistoryPage, SessionInfo } from "./session/history.js";
export type { Subscription, OutboxItem } from "./runtime/streams/outbox.js";
export { isSubagentKey, parentKey, depth, rootKey, parseSessionKey, sessionKeyFor } from "./session/key.js";
export type { AgentDefinition } from "./agents/agent.js";
export type { ModelProvider, ModelRequest, ModelResponse, ModelDelta, Usage } from "./models/provider.js";
export type { ChatMessage, ContentPart, Thinking, ToolCall, ToolSpec } from "./models/message.js";
export type { ImageInput } from "./runtime/turn/images.js";
export { PicoclawError, ConfigError, ModelError, RequestError, AbortedError, TurnTimeoutError, type ErrorCode } from "./errors.js";
export { createLogger, silentLogger, type Logger } from "./log.js";
