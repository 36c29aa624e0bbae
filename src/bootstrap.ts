import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentDefinition } from "./agents/agent.js";
import type { AgentCatalog } from "./agents/catalog.js";
import { loadAgentCatalog, workspacePath } from "./agents/catalog.js";
import type { FrontmatterKeys } from "./agents/frontmatter.js";
import { toolTimeoutMs, toolTimeoutSetting } from "./agents/policy.js";
import type { LoadedConfig } from "./config/load.js";
import { sectionsOf } from "./config/layout.js";
import { ConfigError, messageOf } from "./errors.js";
import { type House, houseOf } from "./house.js";
import { type Logger, redactingLogger } from "./log.js";
import { ModelCatalog, type ModelCatalogOptions } from "./models/catalog.js";
import type { Fetch } from "./models/transport.js";
import { BUILT_IN_ORIGIN, type Clock, EMBEDDER_ORIGIN, type Feature, type Locations, type Preloaded } from "./port/feature.js";
import { Runtime } from "./runtime/runtime.js";
import { temperatureWarnings } from "./models/openai.js";
import { OPENAI_CHANNEL } from "./gateway/openai/channel.js";
import type { HistoryStore } from "./session/history.js";
import type { SessionPorts } from "./session/store.js";
import { memoryStore } from "./session/stores.js";
import type { Timer } from "./signals.js";
import { type Redact, noRedaction, redactor } from "./tools/redact.js";
import type { AnyTool } from "./tools/registry.js";

/**
 * The composition root: config → features → agents → models → session
 * store → runtime. The parts come from the house the config was loaded
 * with (house.ts: the built-in features, channel types, stores and
 * providers, and an embedder's); the runtime names none of them.
 */

export interface BootstrapOptions {
  logger: Logger;
  fetch?: Fetch;
  /** How model providers reach the network, wait between retries and draw jitter (tests make these fast). */
  models?: ModelCatalogOptions;
  /** Extra tools (tests, embedders). */
  tools?: AnyTool[];
  /** Extra features without config sections (embedders), set up after the house's; one with sections goes to `loadConfig`'s `extensions`. */
  features?: Feature[];
  /** Times subagents' timeout_ms, approvals, schedules (default: real timers; tests decide when they run out). */
  timer?: Timer;
  /** The runtime's clock (default: the system's; tests move it). */
  clock?: Clock;
  /** New pairing codes (default: random; tests give their own). */
  pairingCodes?: () => string;
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
  /** Make each agent's workspace folder when missing (default true; `config check` changes nothing on disk). */
  makeWorkspaces?: boolean;
  /** Why nobody can answer an approval request here (`picoclaw agent -m`): calls under "ask" are denied with it. */
  nobodyAnswers?: string;
  /** A model_name of model_list every agent uses, over its own and the default (`picoclaw agent --model`). */
  model?: string;
}

export interface Bootstrapped {
  runtime: Runtime;
  warnings: string[];
  /** Mistakes the gateway starts with (each is also a warning) but `config check` refuses: an agent naming a model that is not in model_list. */
  problems: string[];
}

/** The frontmatter keys every feature reads, for the agent catalog. */
function frontmatterOf(features: readonly Feature[]): FrontmatterKeys {
  return Object.assign({}, ...features.map((feature) => feature.frontmatter ?? {}));
}

/**
 * Everything the CLI does between "config loaded" and "ready": read the
 * agents, check the default agent exists, make the runtime with its
 * features, models and session store. Features are set up as they are (a
 * feature's `preload`, such as starting MCP servers, is `prepare`'s).
 * Problems that must stop start-up throw ConfigError.
 */
export function bootstrap(loaded: LoadedConfig, opts: BootstrapOptions): Bootstrapped {
  return assemble(loaded, opts, houseOf(loaded).features);
}

function assemble(loaded: LoadedConfig, opts: BootstrapOptions, own: readonly Feature[]): Bootstrapped {
  const house = houseOf(loaded);
  const { redact, logger } = secretKeeping(loaded, opts);
  checkExtraFeatures(house, opts.features ?? []);
  // Chat channels are features too (they start with the gateway): one per channel_list entry, made by its type.
  const channels = loaded.config.channel_list.map((entry, i) => {
    const type = house.channels.find((c) => c.type === entry.type);
    if (!type) throw new ConfigError([`channel_list[${i}].type: no channel type "${entry.type}" is registered`]);
    return type.create(entry, `channel_list[${i}]`);
  });
  const features = [...own, ...(opts.features ?? []), ...channels];
  let catalog = loadAgentCatalog(loaded.agentsDir, frontmatterOf(features), {
    baseDir: loaded.baseDir,
    workspace: loaded.config.agents.defaults.workspace,
    home: loaded.env.HOME,
  });
  const wanted = loaded.config.agents.default;
  if (!catalog.agents.has(wanted)) {
    const found = [...catalog.agents.keys()];
    throw new ConfigError([
      `agents.default: no agent "${wanted}" in ${loaded.agentsDir} (${found.length ? `found: ${found.join(", ")}` : "no agents found"}); create ${loaded.agentsDir}/${wanted}/AGENT.md (or, as PicoClaw does, an AGENT.md in the workspace ${workspacePath(loaded.config.agents.defaults.workspace, { baseDir: loaded.baseDir, home: loaded.env.HOME })}, which is agent "main")`,
      ...catalog.warnings,
    ]);
  }
  if (opts.model !== undefined) catalog = { ...catalog, agents: withModel(loaded, catalog.agents, opts.model) };
  checkChannelAgents(loaded, catalog);
  if (opts.makeWorkspaces !== false) makeWorkspaces(catalog.agents.values());
  const models = new ModelCatalog(loaded, { ...opts.models, ...(opts.fetch ? { fetch: opts.fetch } : {}), secrets: [...loaded.secrets] }, house.providers);
  checkUsedModels(loaded, catalog.agents.values(), models);
  const ports = openStore(loaded, house, opts, logger);
  let runtime: Runtime;
  try {
    runtime = new Runtime({
      config: loaded.config,
      agents: catalog.agents,
      models,
      features,
      tools: opts.tools ?? [],
      toolSwitches: loaded.toolSwitches,
      toolSwitchSources: loaded.toolSwitchSources,
      reservedToolKeys: house.layout.reservedToolKeys,
      logger,
      redact,
      env: loaded.env,
      timer: opts.timer,
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.pairingCodes ? { pairingCodes: opts.pairingCodes } : {}),
      locations: locationsOf(loaded),
      // The OpenAI-compatible route's clients show text only: a call there that needs a person is denied, saying why.
      channelsWithoutAsking: [OPENAI_CHANNEL],
      ...(opts.nobodyAnswers === undefined ? {} : { nobodyAnswers: opts.nobodyAnswers }),
      ...ports,
    });
  } catch (error) {
    // Lets go of the session folder (nothing was written yet: this returns at once).
    void Promise.allSettled([ports.history.close(), ports.state?.close()]).then(() => ports.connection?.close().catch(() => {}));
    throw error;
  }
  const names = new Set(loaded.config.model_list.map((m) => m.model_name));
  const problems = [...catalog.agents.values()]
    .filter((agent) => agent.model !== undefined && !names.has(agent.model))
    .map((agent) => `${agent.file}: model "${agent.model}" is not a model_name in model_list (it has: ${[...names].join(", ")})`);
  return {
    runtime,
    warnings: [...loaded.warnings, ...catalog.warnings, ...temperatureWarnings(loaded.config), ...runtime.startupWarnings()].map(redact),
    problems,
  };
}

/** Every agent on one model_list entry (`--model`); a name that is not one stops start-up (exit 2), naming the entries there are. */
function withModel(loaded: LoadedConfig, agents: ReadonlyMap<string, AgentDefinition>, model: string): Map<string, AgentDefinition> {
  const names = loaded.config.model_list.map((entry) => entry.model_name);
  if (!names.includes(model)) throw new ConfigError([`--model: "${model}" is not a model_name in model_list (it has: ${names.join(", ")})`]);
  return new Map([...agents].map(([id, agent]) => [id, { ...agent, model }]));
}

/** An embedder's feature given to bootstrap must bring no config: its sections would not be in the schema the config was read with. */
function checkExtraFeatures(house: House, extra: readonly Feature[]): void {
  const problems = extra
    .filter((feature) => feature.config && !house.features.includes(feature))
    .map(
      (feature) => `feature "${feature.name}" declares config sections: pass it to loadConfig's extensions (so they are read and validated), not to bootstrap`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * The session store `session.store` names, opened (the jsonl store opens
 * and locks its folder; it throws SessionDirBusyError when another gateway
 * owns it), or histories in memory when `opts.history` says so.
 */
function openStore(loaded: LoadedConfig, house: House, opts: Pick<BootstrapOptions, "history">, logger: Logger): SessionPorts {
  if (opts.history !== undefined && opts.history !== "memory") return { history: opts.history };
  const type = opts.history === "memory" ? memoryStore.type : loaded.config.session.store;
  const store = house.stores.find((s) => s.type === type);
  if (!store) throw new ConfigError([`session.store: no store "${type}" is registered`]);
  const options = (loaded.config.session as Record<string, unknown>)[type];
  return store.open({ config: loaded.config, options, baseDir: loaded.baseDir, logger });
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

/** Each agent's workspace folder, made when missing (start-up stops, exit 2, naming the folder, when it cannot be). */
function makeWorkspaces(agents: Iterable<AgentDefinition>): void {
  const problems: string[] = [];
  for (const folder of new Set([...agents].flatMap((agent) => (agent.workspace ? [agent.workspace] : [])))) {
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
    } catch (error) {
      problems.push(`agents.defaults.workspace: cannot make ${folder} (${messageOf(error)})`);
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

/**
 * `bootstrap` after each feature's preload, in order: the modules of
 * `tools.plugins` are loaded and checked (a broken one stops start-up), the
 * MCP servers of `tools.mcp.servers` started (one that does not start is a
 * warning; it is retried, and its tools arrive when it is up). Each
 * preload sees the tool names taken before it. When start-up fails after a
 * preload, what it started is stopped; the runtime closes what it keeps.
 * What only some configs use (the plugin loader, the MCP client with its SDK
 * and ajv) is imported by the preload that needs it.
 */
export async function prepare(loaded: LoadedConfig, given: BootstrapOptions): Promise<Bootstrapped> {
  // Scrubbed once: bootstrap and every preload share the scrubbing logger.
  const opts = { ...given, ...secretKeeping(loaded, given) };
  const house = houseOf(loaded);
  const taken = new Map(house.layout.toolKeys.map((name) => [name, BUILT_IN_ORIGIN]));
  for (const tool of opts.tools ?? []) taken.set(tool.name, EMBEDDER_ORIGIN);
  const preloaded: Preloaded[] = [];
  const abandon = () => Promise.allSettled(preloaded.map((p) => p.abandon?.()));
  const own = house.features.length;
  let done: Bootstrapped;
  try {
    // The house's features, then the embedder's own (given to bootstrap's options), each preloaded in turn.
    for (const feature of [...house.features, ...(opts.features ?? [])]) {
      if (!feature.preload) {
        preloaded.push({ feature });
        continue;
      }
      const done = await feature.preload({
        config: sectionsOf(loaded.config, feature.config),
        baseDir: loaded.baseDir,
        env: loaded.env,
        logger: opts.logger,
        redact: opts.redact,
        signal: opts.signal,
        taken,
        reservedToolKeys: house.layout.reservedToolKeys,
        toolTimeoutMs: (tool) => toolTimeoutMs(loaded.config.tools, tool),
        toolTimeoutSetting: (tool) => toolTimeoutSetting(loaded.config.tools, tool),
      });
      preloaded.push(done);
      for (const tool of done.tools ?? []) taken.set(tool.name, `feature "${feature.name}"`);
    }
    const features = preloaded.map((p) => p.feature);
    done = assemble(loaded, { ...opts, features: features.slice(own) }, features.slice(0, own));
  } catch (error) {
    await abandon();
    throw error;
  }
  // A store reached over a connection (a database) is reached, and its schema migrated, before the gateway listens.
  try {
    await done.runtime.storeReady();
  } catch (error) {
    await done.runtime.close(0);
    throw error;
  }
  return done;
}

/** The skills the package ships (`skills/` beside `dist/` and `src/`). */
export const PACKAGE_SKILLS_DIR = fileURLToPath(new URL("../skills/", import.meta.url));

/** PicoClaw's home and the built-in skills' folder: `$PICOCLAW_BUILTIN_SKILLS` (relative to the config's folder), else the package's. */
function locationsOf(loaded: LoadedConfig): Locations {
  const builtin = loaded.env.PICOCLAW_BUILTIN_SKILLS?.trim();
  return {
    ...(loaded.home === undefined ? {} : { home: loaded.home }),
    builtinSkills: builtin ? path.resolve(loaded.baseDir, builtin) : PACKAGE_SKILLS_DIR,
  };
}
