import { loadAgentCatalog } from "./agents/catalog.js";
import type { LoadedConfig } from "./config/load.js";
import { ConfigError } from "./errors.js";
import type { Logger } from "./log.js";
import { ModelCatalog, type ModelCatalogOptions } from "./models/catalog.js";
import type { Fetch } from "./models/transport.js";
import { Runtime } from "./runtime/runtime.js";
import { BUILTIN_TOOL_NAMES } from "./config/schema.js";
import { loadPlugins } from "./tools/plugins.js";
import type { AnyTool } from "./tools/registry.js";

export interface BootstrapOptions {
  logger: Logger;
  fetch?: Fetch;
  /** How model providers reach the network, wait between retries and draw jitter (tests make these fast). */
  models?: ModelCatalogOptions;
  /** Extra tools (tests, embedders). */
  tools?: AnyTool[];
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
  const runtime = new Runtime({
    config: loaded.config,
    agents: catalog.agents,
    models: new ModelCatalog(loaded, { ...opts.models, ...(opts.fetch ? { fetch: opts.fetch } : {}) }),
    tools: opts.tools ?? [],
    toolSwitches: loaded.toolSwitches,
    logger: opts.logger,
  });
  return { runtime, warnings: [...loaded.warnings, ...catalog.warnings, ...runtime.startupWarnings()], origins: new Map() };
}

/**
 * `bootstrap` with the tools the config plugs in: the modules of
 * `tools.plugins`, loaded and checked first (a broken one stops start-up).
 */
export async function prepare(loaded: LoadedConfig, opts: BootstrapOptions): Promise<Bootstrapped> {
  const taken = new Map(BUILTIN_TOOL_NAMES.map((name) => [name, "the built-in tools"]));
  for (const tool of opts.tools ?? []) taken.set(tool.name, "the embedding program");
  const plugins = await loadPlugins(loaded.config.tools.plugins, loaded.baseDir, taken);
  const prepared = bootstrap(loaded, { ...opts, tools: [...(opts.tools ?? []), ...plugins.flatMap((p) => p.tools)] });
  for (const plugin of plugins) for (const tool of plugin.tools) prepared.origins.set(tool.name, `plugin ${plugin.spec}`);
  return prepared;
}
