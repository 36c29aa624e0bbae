/**
 * `picoclaw-ts/runtime`: for programs that embed the gateway. Load a config,
 * bootstrap a runtime (with features of your own, if you like), serve it
 * over HTTP or drive it through `handleMessage`.
 */
import { builtinConfigSchema } from "./house.js";

export type { LoadedConfig, LoadConfigOptions } from "./config/load.js";
export { toolGate, type Config, type ModelEntry } from "./config/schema.js";
export { channelEntry, type ChannelEntry } from "./config/channel-schema.js";
export type { ConfigSections, OwnSections } from "./config/layout.js";
export { loadConfig, makeHouse, type Extensions, type House } from "./house.js";
export { bootstrap, prepare, type Bootstrapped, type BootstrapOptions } from "./bootstrap.js";
/** The schema of the config with the built-in features and adapters (a config made in code: `configSchema.parse({...})`). */
export const configSchema = builtinConfigSchema();
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
export {
  defineFeature,
  type Feature,
  type FeatureHost,
  type FeatureParts,
  type Capability,
  type PreloadContext,
  type Preloaded,
  type TypedSections,
  type Clock,
  type Delivery,
} from "./port/feature.js";
export type { ChannelType } from "./port/channel-type.js";
export type { SessionStoreAdapter, SessionPorts, StoreContext, StoreConnection } from "./session/store.js";
export type { ProviderAdapter } from "./models/adapter.js";
export type { Command, CommandContext } from "./port/command.js";
export type { FeatureRoute, RouteRequest, RouteAnswer, RouteMethod } from "./port/route.js";
export type { PromptSection, PromptTurn } from "./port/prompt.js";
export type { RuntimeEvents, EventScope, EventName } from "./port/events.js";
export { SessionState, type SessionScoped, type ClearReason } from "./session/state.js";
export type { HistoryStore, HistoryPage, SessionInfo } from "./session/history.js";
export { Outbox, type SessionOutbox, type SessionStream, type Subscription, type OutboxItem } from "./session/outbox.js";
export type { TurnOrder } from "./session/turn-order.js";
export type { StopBoard, HeldStop } from "./session/stop-switches.js";
export type { FeatureStateStore, FeatureState, StateEntry } from "./session/feature-state.js";
export { isSubagentKey, parentKey, depth, rootKey, parseSessionKey, sessionKeyFor } from "./session/key.js";
export type { AgentDefinition } from "./agents/agent.js";
export type { ModelProvider, ModelRequest, ModelResponse, ModelDelta, Usage } from "./models/provider.js";
export type { ChatMessage, ContentPart, Thinking, ToolCall, ToolSpec } from "./models/message.js";
export type { ImageInput } from "./runtime/turn/images.js";
export { PicoclawError, ConfigError, ModelError, RequestError, AbortedError, TurnTimeoutError, type ErrorCode } from "./errors.js";
export { createLogger, silentLogger, type Logger } from "./log.js";
