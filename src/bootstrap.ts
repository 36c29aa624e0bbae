import path from "node:path";
import type { AgentDefinition } from "./agents/agent.js";
import type { AgentCatalog } from "./agents/catalog.js";
import { loadAgentCatalog } from "./agents/catalog.js";
import type { FrontmatterKeys } from "./agents/frontmatter.js";
import { toolTimeoutMs, toolTimeoutSetting } from "./agents/policy.js";
import type { LoadedConfig } from "./config/load.js";
import { BUILTIN_TOOL_NAMES } from "./config/schema.js";
import { AbortedError, ConfigError } from "./errors.js";
import { BUILT_IN_ORIGIN, EMBEDDER_ORIGIN, type Feature } from "./port/feature.js";
import { type Logger, redactingLogger } from "./log.js";
import type { Timer } from "./signals.js";
import { ModelCatalog, type ModelCatalogOptions } from "./models/catalog.js";
import type { Fetch } from "./models/transport.js";
import { Runtime } from "./runtime/runtime.js";
import type { McpHub, McpStartReport } from "./features/mcp/index.js";
import { mcpFeature } from "./features/mcp/feature.js";
import { pluginFeature } from "./features/plugins/feature.js";
import { type Redact, noRedaction, redactor } from "./tools/redact.js";
import type { AnyTool } from "./tools/registry.js";
import { type SubagentFeature, subagentFeature } from "./features/subagents/feature.js";
import { type TodoFeature, todoFeature } from "./features/todo/feature.js";
import { telegramChannel } from "./features/telegram/feature.js";
import type { HistoryStore } from "./session/history.js";
import { JsonlHistoryStore } from "./session/jsonl-store.js";

/**
 * The composition root: config → features → agents → models → runtime.
 * Every feature (todo, subagents, plugin modules, MCP servers) is made and
 * registered here, the same way; the runtime names none of them.
 */

export interface BootstrapOptions {
  logger: Logger;
  fetch?: Fetch;
  /** How model providers reach the network, wait between retries and draw jitter (tests make these fast). */
  models?: ModelCatalogOptions;
  /** Extra tools (tests, embedders). */
  tools?: AnyTool[];
  /** Extra features (embedders), set up after the built-in ones. */
  features?: Feature[];
  /** Times subagents' timeout_ms (default: real timers; tests decide when it runs out). */
  timer?: Timer;
  /** Stops start-up (MCP servers that are starting are stopped); `prepare` then throws AbortedError. */
  signal?: AbortSignal;
  /**
   * Where histories are kept. By default what `session.store` says: with
   * `jsonl`, the session folder is opened (and locked for this process).
   * `"memory"` keeps them in memory whatever the config says (commands that
   * must not take the folder from a running gateway).
   */
  history?: HistoryStore | "memory";
  /** The config's secrets' scrubber, when `logger` scrubs with it already (the CLI's): the logger is then used as it is. */
  redact?: Redact;
}

/** The built-in features, kept so that tests and embedders can look inside them. */
export interface BuiltinFeatures {
  todo: TodoFeature;
  subagents: SubagentFeature;
}

export interface Bootstrapped {
  runtime: Runtime;
  warnings: string[];
  /** Mistakes the gateway starts with (each is also a warning) but `config check` refuses: an agent naming a model that is not in model_list. */
  problems: string[];
  builtins: BuiltinFeatures;
}

/** The frontmatter keys every feature reads, for the agent catalog. */
function frontmatterOf(features: readonly Feature[]): FrontmatterKeys {
  return Object.assign({}, ...features.map((feature) => feature.frontmatter ?? {}));
}

/**
 * Everything the CLI does between "config loaded" and "ready": read the
 * agents, check the default agent exists, make the runtime with its
 * features and models. Problems that must stop start-up throw ConfigError.
 */
export function bootstrap(loaded: LoadedConfig, opts: BootstrapOptions): Bootstrapped {
  const { redact, logger } = secretKeeping(loaded, opts);
  const builtins: BuiltinFeatures = { todo: todoFeature(), subagents: subagentFeature() };
  // Chat channels are features too (they start with the gateway): one per channel_list entry.
  const channels = loaded.config.channel_list.map((entry, i) => telegramChannel(entry, `channel_list[${i}]`));
  const features = [builtins.todo, builtins.subagents, ...(opts.features ?? []), ...channels];
  const catalog = loadAgentCatalog(loaded.agentsDir, frontmatterOf(features));
  const wanted = loaded.config.agents.default;
  if (!catalog.agents.has(wanted)) {
    const found = [...catalog.agents.keys()];
    throw new ConfigError([
      `agents.default: no agent "${wanted}" in ${loaded.agentsDir} (${found.length ? `found: ${found.join(", ")}` : "no agents found"}); create ${loaded.agentsDir}/${wanted}/AGENT.md`,
      ...catalog.warnings,
    ]);
  }
  checkChannelAgents(loaded, catalog);
  const models = new ModelCatalog(loaded, { ...opts.models, ...(opts.fetch ? { fetch: opts.fetch } : {}), secrets: [...loaded.secrets] });
  checkUsedModels(loaded, catalog.agents.values(), models);
  const history = opts.history === "memory" ? undefined : (opts.history ?? openHistory(loaded, logger));
  let runtime: Runtime;
  try {
    runtime = new Runtime({
      config: loaded.config,
      agents: catalog.agents,
      models,
      features,
      tools: opts.tools ?? [],
      toolSwitches: loaded.toolSwitches,
      logger,
      redact,
      timer: opts.timer,
      ...(history ? { history } : {}),
    });
  } catch (error) {
    // Lets go of the session folder (nothing was written yet: this returns at once).
    void history?.close?.();
    throw error;
  }
  const names = new Set(loaded.config.model_list.map((m) => m.model_name));
  const problems = [...catalog.agents.values()]
    .filter((agent) => agent.model !== undefined && !names.has(agent.model))
    .map((agent) => `${agent.file}: model "${agent.model}" is not a model_name in model_list (it has: ${[...names].join(", ")})`);
  return { runtime, warnings: [...loaded.warnings, ...catalog.warnings, ...runtime.startupWarnings()].map(redact), problems, builtins };
}

/**
 * The session folder of `session.store: "jsonl"` (relative to the config
 * file), opened and locked; undefined for `"memory"` (the runtime keeps
 * histories in memory). Throws SessionDirBusyError when another gateway
 * owns the folder.
 */
export function openHistory(loaded: LoadedConfig, logger: Logger): HistoryStore | undefined {
  const { session, agents } = loaded.config;
  if (session.store !== "jsonl") return undefined;
  return JsonlHistoryStore.open({
    dir: path.resolve(loaded.baseDir, session.dir),
    maxMessages: agents.defaults.max_history_messages,
    maxBytes: agents.defaults.max_history_bytes,
    maxSessions: session.max_sessions,
    maxTotalBytes: session.max_bytes,
    maxStored: session.max_stored,
    warn: (message) => logger.warn(message),
  });
}

/**
 * The one scrubber of the config's secrets, and the logger that applies it
 * to every line: what tools, MCP servers and errors say is cleaned of them
 * before it reaches the model, the user or the log.
 */
function secretKeeping(loaded: LoadedConfig, opts: Pick<BootstrapOptions, "logger" | "redact">): { redact: Redact; logger: Logger } {
  if (opts.redact) return { redact: opts.redact, logger: opts.logger };
  const redact = redactor(loaded.secrets);
  const { logger } = opts;
  // No secrets configured: nothing to scrub, so no copy of every line's data.
  return { redact, logger: redact === noRedaction ? logger : redactingLogger(logger, redact) };
}

/**
 * Every model entry an agent will use (the default model, and each agent's
 * own) must be usable now: its `${VAR}`s set, its `api_base` a URL, its
 * options valid for its provider. Otherwise start-up stops, naming the
 * config path; entries nobody uses may stay incomplete.
 */
function checkUsedModels(loaded: LoadedConfig, agents: Iterable<AgentDefinition>, models: ModelCatalog): void {
  const known = new Set(loaded.config.model_list.map((m) => m.model_name));
  const used = new Set([loaded.config.agents.defaults.model_name]);
  for (const agent of agents) if (agent.model !== undefined && known.has(agent.model)) used.add(agent.model);
  const problems: string[] = [];
  for (const name of used) {
    try {
      models.get(name);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Every channel's `agent` must exist (start-up stops, exit 2, naming the entry). */
function checkChannelAgents(loaded: LoadedConfig, catalog: AgentCatalog): void {
  const found = [...catalog.agents.keys()].join(", ");
  const problems = loaded.config.channel_list.flatMap((entry, i) =>
    entry.agent === undefined || catalog.agents.has(entry.agent)
      ? []
      : [`channel_list[${i}].agent: no agent "${entry.agent}" in ${loaded.agentsDir} (found: ${found})`],
  );
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Starts the hub, unless `signal` says stop first: then every server is stopped and start-up ends. */
async function startOrStop(hub: McpHub, signal: AbortSignal | undefined): Promise<McpStartReport> {
  if (!signal) return hub.start();
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(new AbortedError("start-up was stopped"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([hub.start(), stopped]);
  } catch (error) {
    await hub.close();
    throw error;
  } finally {
    signal.removeEventListener("abort", onAbort!);
    stopped.catch(() => {});
  }
}

/** What an MCP server process inherits from the gateway's environment; the rest it gets only through its own `env`. */
export const MCP_INHERITED_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ"];

/**
 * `bootstrap` with the features the config plugs in: the modules of
 * `tools.plugins`, loaded and checked first (a broken one stops start-up),
 * and the MCP servers of `tools.mcp.servers` (a server that does not start
 * is a warning; it is retried, and its tools arrive when it is up). The
 * runtime closes the servers when it closes. The plugin loader and the MCP
 * client (with the SDK and ajv behind them) are imported only when the
 * config lists plugins or servers: a gateway without them never loads them.
 */
export async function prepare(loaded: LoadedConfig, given: BootstrapOptions): Promise<Bootstrapped> {
  // Scrubbed once: bootstrap and the MCP hub share the scrubbing logger.
  const opts = { ...given, ...secretKeeping(loaded, given) };
  const taken = new Map(BUILTIN_TOOL_NAMES.map((name) => [name, BUILT_IN_ORIGIN]));
  for (const tool of opts.tools ?? []) taken.set(tool.name, EMBEDDER_ORIGIN);
  const specs = loaded.config.tools.plugins;
  const plugins = specs.length > 0 ? await (await import("./features/plugins/load.js")).loadPlugins(specs, loaded.baseDir, taken) : [];
  const pluginTools = plugins.flatMap((p) => p.tools);
  const features = [...(opts.features ?? []), pluginFeature(plugins)];

  const servers = loaded.config.tools.mcp.servers;
  if (Object.keys(servers).length > 0) {
    const { McpHub } = await import("./features/mcp/index.js");
    const hub = new McpHub(servers, {
      logger: opts.logger,
      redact: opts.redact,
      baseDir: loaded.baseDir,
      env: Object.fromEntries(MCP_INHERITED_ENV.filter((k) => loaded.env[k] !== undefined).map((k) => [k, loaded.env[k]])),
      callTimeoutMs: (tool) => toolTimeoutMs(loaded.config.tools, tool),
      callTimeoutSetting: (tool) => toolTimeoutSetting(loaded.config.tools, tool),
      ...(loaded.config.tools.mcp.max_message_bytes === undefined ? {} : { maxMessageBytes: loaded.config.tools.mcp.max_message_bytes }),
    });
    const report = await startOrStop(hub, opts.signal);
    const clashes = report.tools.filter((tool) => taken.has(tool.name) || pluginTools.some((p) => p.name === tool.name));
    if (clashes.length > 0) {
      await hub.close();
      throw new ConfigError(
        clashes.map((tool) => `tools.mcp.servers.${hub.origin(tool.name)}: its tool "${tool.name}" clashes with another tool of that name`),
      );
    }
    features.push(mcpFeature(hub, report.tools, report.warnings));
    try {
      return bootstrap(loaded, { ...opts, features });
    } catch (error) {
      await hub.close();
      throw error;
    }
  }
  return bootstrap(loaded, { ...opts, features });
}
