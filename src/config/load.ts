import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import dotenv from "dotenv";
import { ConfigError } from "../errors.js";
import { describeIssues, formatPath } from "../validation.js";
import { type ToolSwitch, type ToolSwitchSources, applyEnvOverrides } from "./env.js";
import { HOME_CONFIG_FILE, picoclawHome } from "./home.js";
import type { ConfigLayout } from "./layout.js";
import { fromPicoclaw } from "./picoclaw-compat.js";
import { type Config, type ModelEntry, defaultMaxSessions } from "./schema.js";
import { collectSecrets } from "./secrets.js";
import { type MissingVariable, type SubstitutedString, substituteVariables } from "./substitute.js";

export type Env = Readonly<Record<string, string | undefined>>;

export interface LoadConfigOptions {
  /** The process environment (never mutated). */
  env: Env;
  /** The working directory the default config and `.env` are looked up in. */
  cwd: string;
  /** Command-line arguments; `--config PATH` (or `--config=PATH`) picks the file. */
  argv?: readonly string[];
}

/** A model entry's `${VAR}` references that were not set, by model_name. */
export type UnresolvedVariables = ReadonlyMap<string, readonly { path: string; variable: string }[]>;

export interface LoadedConfig {
  config: Config;
  /** The layout the config was read with: the registered features' and adapters' sections. */
  layout: ConfigLayout;
  /** The config file read, or null when none exists and defaults apply. */
  file: string | null;
  /** The folder relative paths in the config resolve against. */
  baseDir: string;
  /** `agents.dir`, resolved. */
  agentsDir: string;
  /** The environment after `.env` files were merged in (set variables win). */
  env: Env;
  /** PicoClaw's home folder (`$PICOCLAW_HOME`, else `~/.picoclaw`), whether or not its config was read; undefined when nothing says where it is. */
  home: string | undefined;
  warnings: string[];
  unresolved: UnresolvedVariables;
  /** `PICOCLAW_TOOLS_<NAME>_ENABLED` for tools that are not built in (applied when tools are known). */
  toolSwitches: ToolSwitch[];
  /** Where each `tools.<name>.enabled` came from: the tools the file switches, and the built-in tools a variable switches (tool → variable). */
  toolSwitchSources: ToolSwitchSources;
  /**
   * Every secret value of the config (see secrets.ts): what `${VAR}`s were
   * replaced with, secret-named `.env` entries, the token override, and the
   * file's own secrets by their place. Never logged, shown or sent anywhere.
   */
  secrets: ReadonlySet<string>;
  /** The strings that took values from `${VAR}`, as written (for `config check`, which masks each variable). */
  substituted: readonly SubstitutedString[];
}

export const DEFAULT_CONFIG_FILE = "picoclaw.config.json";
/** PicoClaw keeps secrets in this YAML file beside its config; it is not read here (a start-up note says so). */
const PICOCLAW_SECURITY_FILE = ".security.yml";

/**
 * Finds, reads and validates the config with `layout`'s schema: file
 * (`--config`, `$PICOCLAW_CONFIG`, `./picoclaw.config.json`,
 * `$PICOCLAW_HOME/config.json`) → `${VAR}`
 * substitution → env overrides → zod. Throws one ConfigError listing every
 * problem. Pure: it reads files but never touches `process.env` or the
 * process. (The composition root's `loadConfig` reads with the built-in
 * features and adapters, and what an embedder adds.)
 */
export function readConfig(opts: LoadConfigOptions, layout: ConfigLayout): LoadedConfig {
  const env: Record<string, string | undefined> = { ...opts.env };
  const dotenvEntries: Record<string, string> = {};
  loadDotenv(path.join(opts.cwd, ".env"), env, dotenvEntries);

  const explicit = configArgument(opts.argv ?? []) ?? (env.PICOCLAW_CONFIG || undefined);
  const home = picoclawHome(env, opts.cwd);
  const file = path.resolve(opts.cwd, explicit ?? DEFAULT_CONFIG_FILE);
  let raw: unknown = {};
  let found: string | null = null;
  if (existsSync(file)) {
    found = file;
  } else if (explicit !== undefined) {
    const source = configArgument(opts.argv ?? []) !== undefined ? "--config" : "PICOCLAW_CONFIG";
    throw new ConfigError([`${source}: config file not found: ${file}`]);
  } else if (home && existsSync(path.join(home, HOME_CONFIG_FILE))) {
    // PicoClaw's layout: $PICOCLAW_HOME/config.json, its workspace beside it.
    found = path.join(home, HOME_CONFIG_FILE);
  }
  if (found) raw = readJson(found);
  const baseDir = found ? path.dirname(found) : opts.cwd;
  if (found && baseDir !== opts.cwd) loadDotenv(path.join(baseDir, ".env"), env, dotenvEntries);
  const homeNotes =
    found && existsSync(path.join(baseDir, PICOCLAW_SECURITY_FILE))
      ? [
          `${path.join(baseDir, PICOCLAW_SECURITY_FILE)}: PicoClaw's secrets file is not read here; put its values in ${path.join(baseDir, ".env")} and write them as \${VAR} in the config`,
        ]
      : [];

  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new ConfigError([`${found}: the config must be a JSON object`]);
  }
  // A config written for PicoClaw reads as ours; what it has and we do not is a warning.
  const compat = fromPicoclaw(raw as Record<string, unknown>, layout.picoclaw());
  raw = compat.config;
  const problems: string[] = [];
  const substituted = substituteVariables(raw, env);
  const resolvedRaw = substituted.value as Record<string, unknown>;
  const unresolved = new Map<string, { path: string; variable: string }[]>();
  for (const missing of substituted.missing) {
    const modelIndex = modelIndexOf(missing);
    if (modelIndex === undefined) {
      problems.push(`${formatPath(missing.path)}: environment variable ${missing.variable} is not set`);
    }
  }

  // Read before the variables write into the same sections.
  const inFile = switchedInFile(raw);
  const overrides = applyEnvOverrides(resolvedRaw, env, layout);
  problems.push(...overrides.problems);
  const fromEnv = new Map(
    layout.toolKeys.flatMap((key) => {
      const variable = overrides.setBy.get(formatPath(["tools", key, "enabled"]));
      return variable === undefined ? [] : [[key, variable] as const];
    }),
  );

  // Parsed once: no compiled fast path (zod would build one with new Function, which costs more than it saves here).
  const parsed = layout.schema.safeParse(resolvedRaw, { reportInput: true, jitless: true });
  if (!parsed.success) {
    problems.push(
      ...describeIssues(parsed.error, {
        rename: (p) => {
          const variable = overrides.setBy.get(p);
          return variable ? `${variable} (${p})` : undefined;
        },
      }),
    );
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);

  const config = parsed.data;
  // A default that depends on another key (the store), said in the loaded config as any other is.
  config.session.max_sessions ??= defaultMaxSessions(config.session.store);
  for (const missing of substituted.missing) {
    const index = modelIndexOf(missing);
    if (index === undefined) continue;
    const entry = config.model_list[index];
    if (!entry) continue;
    const list = unresolved.get(entry.model_name) ?? [];
    list.push({ path: formatPath(missing.path), variable: missing.variable });
    unresolved.set(entry.model_name, list);
  }

  return {
    config,
    layout,
    file: found,
    baseDir,
    agentsDir: path.resolve(baseDir, config.agents.dir),
    env,
    home,
    warnings: [...homeNotes, ...compat.notes, ...overrides.warnings],
    unresolved,
    toolSwitches: overrides.toolSwitches,
    toolSwitchSources: { inFile, fromEnv },
    secrets: collectSecrets(config, {
      substituted: substituted.substituted.flatMap((s) => s.values),
      dotenv: dotenvEntries,
      overrides: overrides.secrets,
      contributed: layout.contributedSecrets(config),
    }),
    substituted: substituted.substituted,
  };
}

/**
 * The model entry named `modelName`, checked for use: throws a ConfigError
 * naming the config path and the variable when one of its `${VAR}` is unset.
 */
export function usableModelEntry(loaded: Pick<LoadedConfig, "config" | "unresolved">, modelName: string): ModelEntry {
  const entry = loaded.config.model_list.find((m) => m.model_name === modelName);
  if (!entry) {
    const known = loaded.config.model_list.map((m) => m.model_name).join(", ");
    throw new ConfigError([`unknown model_name "${modelName}"; model_list has: ${known}`]);
  }
  const missing = loaded.unresolved.get(modelName);
  if (missing && missing.length > 0) {
    throw new ConfigError(missing.map((m) => `${m.path}: environment variable ${m.variable} is not set (model "${modelName}" needs it)`));
  }
  return entry;
}

/** The tools whose `tools.<name>.enabled` the config (as read, before the variables) writes. */
function switchedInFile(raw: unknown): Set<string> {
  const tools = (raw as { tools?: unknown }).tools;
  if (tools === null || typeof tools !== "object" || Array.isArray(tools)) return new Set();
  return new Set(
    Object.entries(tools as Record<string, unknown>)
      .filter(([, section]) => section !== null && typeof section === "object" && !Array.isArray(section) && "enabled" in section)
      .map(([name]) => name),
  );
}

function modelIndexOf(missing: MissingVariable): number | undefined {
  const [head, index] = missing.path;
  return head === "model_list" && typeof index === "number" ? index : undefined;
}

function configArgument(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--config") {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("-")) throw new ConfigError(["--config: expected a file path"]);
      return next;
    }
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return undefined;
}

/** Merges a `.env` file into `env` (set variables win) and records its entries in `entries`. */
function loadDotenv(file: string, env: Record<string, string | undefined>, entries: Record<string, string>): void {
  if (!existsSync(file)) return;
  let parsed: Record<string, string>;
  try {
    parsed = dotenv.parse(readFileSync(file));
  } catch (error) {
    throw new ConfigError([`${file}: cannot read the .env file (${(error as Error).message})`]);
  }
  for (const [name, value] of Object.entries(parsed)) {
    entries[name] = value;
    if (env[name] === undefined) env[name] = value;
  }
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError([`${file}: cannot read the config file (${(error as Error).message})`]);
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message);
    let where = "";
    if (at) {
      const before = text.slice(0, Number(at[1]));
      const line = before.split("\n").length;
      const column = before.length - before.lastIndexOf("\n");
      where = ` at line ${line}, column ${column}`;
    }
    throw new ConfigError([`${file}: invalid JSON${where}: ${message}`]);
  }
}
