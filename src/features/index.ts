import type { ChannelType } from "../port/channel-type.js";
import type { Feature } from "../port/feature.js";
import { askUserFeature } from "./ask-user/feature.js";
import { cronFeature } from "./cron/feature.js";
import { discordChannel } from "./discord/feature.js";
import { execFeature } from "./exec/feature.js";
import { filesFeature } from "./files/feature.js";
import { heartbeatFeature } from "./heartbeat/feature.js";
import { mcpFeature } from "./mcp/feature.js";
import { memoryFeature } from "./memory/feature.js";
import { pluginsFeature } from "./plugins/feature.js";
import { promptFilesFeature } from "./prompt-files/feature.js";
import { skillsFeature } from "./skills/feature.js";
import { subagentsFeature } from "./subagents/feature.js";
import { telegramChannel } from "./telegram/feature.js";
import { todoFeature } from "./todo/feature.js";
import { webFeature } from "./web/feature.js";

/**
 * The built-in features and chat channel types: the one list a new one is
 * added to (its folder under features/ holds everything else: its config
 * sections, tools, commands, routes, events and tests' hooks). They are set
 * up in this order; an embedder's come after them.
 */
export const BUILTIN_FEATURES: readonly Feature[] = [
  todoFeature,
  subagentsFeature,
  filesFeature,
  execFeature,
  askUserFeature,
  webFeature,
  promptFilesFeature,
  skillsFeature,
  memoryFeature,
  heartbeatFeature,
  cronFeature,
  pluginsFeature,
  mcpFeature,
];

/** The chat apps a `channel_list` entry may name as its `type`. */
export const BUILTIN_CHANNELS: readonly ChannelType[] = [telegramChannel, discordChannel];

/** The skills and cron features, for the CLI's `picoclaw skills list` and `picoclaw cron` (their `api`s). */
export { cronFeature, skillsFeature };
/** The configured MCP servers as the config describes them, for `picoclaw agents` (which starts none). */
export { describeMcpServers } from "./mcp/feature.js";
