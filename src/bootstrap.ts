import type { AgentDefinition } from "./agents/agent.js";
import { loadAgentCatalog } from "./agents/catalog.js";
import type { LoadedConfig } from "./config/load.js";
import { AbortedError, ConfigError } from "./errors.js";
import type { Logger } from "./log.js";
import { ModelCatalog, type ModelCatalogOptions } from "./models/catalog.js";
import type { Fetch } from "./models/transport.js";
import { Runtime } from "./runtime/runtime.js";
import type { Timer } from "./signals.js";
import { BUILTIN_TOOL_NAMES } from "./config/schema.js";
import { McpHub, type McpStartReport } from "./tools/mcp/index.js";
import { loadPlugins } from "./tools/plugins.js";
import { type AnyTool, DEFAULT_TOOL_TIMEOUT_MS } from "./tools/registry.js";

export interface BootstrapOptions {
  logger: Logger;
  fetch?: Fetch;
  /** How model providers reach the network, wait between retries and draw jitter (tests make these fast). */
  models?: ModelCatalogOptions;
  /** Extra tools (tests, embedders). */
  tools?: AnyTool[];
  /** Times subagents' timeout_ms (default: real timers; tests decide when it runs out). */
  timer?: Timer;
  /** Stops start-up (MCP servers that are starting are stopped); `prepare` then throws AbortedError. */
  signal?: AbortSignal;
}

export interface Bootstrapped {
  runtime: Runtime;
  warnings: string[];
  /** Where each tool that is not built in came from (`plugin ./tools/x.js`, `mcp server fs`). */
  origins: Map<string, string>;
}

/**
 * Everything the CLI does between "config loaded" and "ready": read the
 * agents, check the default agent exists, make the runtime with its tools
 * and models. Problems that must stop start-up throw ConfigError.
 */
export function bootstrap(loaded: LoadedConfig, opts: BootstrapOptions): Bootstrapped {
  const catalog = loadAgentCatalog(loaded.agentsDir);
  const wanted = loaded.config.agents.default;
  if (!catalog.agents.has(wanted)) {
    const found = [...catalog.agents.keys()];
    throw new ConfigError([
      `agents.default: no agent "${wanted}" in ${loaded.agentsDir} (${found.length ? `found: ${found.join(", ")}` : "no agents found"}); create ${loaded.agentsDir}/${wanted}/AGENT.md`,
      ...catalog.warnings,
    ]);
  }
  const models = new ModelCatalog(loaded, { ...opts.models, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  checkUsedModels(loaded, catalog.agents.values(), models);
  const runtime = new Runtime({
    config: loaded.config,
    agents: catalog.agents,
    models,
    tools: opts.tools ?? [],
    toolSwitches: loaded.toolSwitches,
    logger: opts.logger,
    timer: opts.timer,
  });
  return { runtime, warnings: [...loaded.warnings, ...catalog.warnings, ...runtime.startupWarnings()], origins: new Map() };
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
 * `bootstrap` with the tools the config plugs in: the modules of
 * `tools.plugins`, loaded and checked first (a broken one stops start-up),
 * and the tools of the MCP servers of `tools.mcp.servers` (a server that
 * does not start is a warning; it is retried, and its tools arrive when it
 * is up). The runtime closes the servers when it closes.
 */
export async function prepare(loaded: LoadedConfig, opts: BootstrapOptions): Promise<Bootstrapped> {
  const taken = new Map(BUILTIN_TOOL_NAMES.map((name) => [name, "the built-in tools"]));
  for (const tool of opts.tools ?? []) taken.set(tool.name, "the embedding program");
  const plugins = await loadPlugins(loaded.config.tools.plugins, loaded.baseDir, taken);
  const pluginTools = plugins.flatMap((p) => p.tools);

  const servers = loaded.config.tools.mcp.servers;
  let runtime: Runtime | undefined;
  const hub =
    Object.keys(servers).length === 0
      ? undefined
      : new McpHub(servers, {
          logger: opts.logger,
          baseDir: loaded.baseDir,
          env: Object.fromEntries(MCP_INHERITED_ENV.filter((k) => loaded.env[k] !== undefined).map((k) => [k, loaded.env[k]])),
          callTimeoutMs: (tool) => runtime?.policy.timeoutMs(tool) ?? tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
        });
  const report = hub ? await startOrStop(hub, opts.signal) : { tools: [], warnings: [] };
  const clashes = report.tools.filter((tool) => taken.has(tool.name) || pluginTools.some((p) => p.name === tool.name));
  if (clashes.length > 0) {
    await hub?.close();
    throw new ConfigError(clashes.map((tool) => `tools.mcp.servers.${hub!.origin(tool.name)}: its tool "${tool.name}" clashes with another tool of that name`));
  }

  let prepared: Bootstrapped;
  try {
    prepared = bootstrap(loaded, { ...opts, tools: [...(opts.tools ?? []), ...pluginTools, ...report.tools] });
  } catch (error) {
    await hub?.close();
    throw error;
  }
  runtime = prepared.runtime;
  prepared.warnings.push(...report.warnings);
  for (const plugin of plugins) for (const tool of plugin.tools) prepared.origins.set(tool.name, `plugin ${plugin.spec}`);
  if (hub) {
    for (const tool of report.tools) prepared.origins.set(tool.name, `mcp server ${hub.origin(tool.name)}`);
    const registry = prepared.runtime.tools;
    hub.onToolsChanged((change) => {
      for (const tool of change.added) {
        if (registry.get(tool.name)) {
          opts.logger.warn(`MCP server "${change.server}": its tool "${tool.name}" clashes with another tool of that name; skipped`);
          continue;
        }
        registry.add(tool);
        prepared.origins.set(tool.name, `mcp server ${change.server}`);
      }
      prepared.runtime.policy.refresh();
    });
    prepared.runtime.onClose(() => hub.close());
  }
  return prepared;
}
