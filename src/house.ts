import { readConfig, type LoadConfigOptions, type LoadedConfig } from "./config/load.js";
import { ConfigLayout } from "./config/layout.js";
import { ConfigError } from "./errors.js";
import { BUILTIN_CHANNELS, BUILTIN_FEATURES } from "./features/index.js";
import type { ProviderAdapter } from "./models/adapter.js";
import { BUILTIN_PROVIDERS } from "./models/providers.js";
import type { ChannelType } from "./port/channel-type.js";
import type { Feature } from "./port/feature.js";
import type { SessionStoreAdapter } from "./session/store.js";
import { BUILTIN_STORES } from "./session/stores.js";

/**
 * The house: what a gateway is built from. The built-in features and
 * channel types (features/index.ts), session stores (session/stores.ts)
 * and model providers (models/providers.ts), and what an embedding program
 * adds to them. Its config layout (the core schema with every section,
 * entry and option they declare) is what `loadConfig` reads with; the
 * loaded config remembers its house, so `bootstrap` makes the runtime of
 * the same parts.
 */

/** What an embedding program adds to the built-in parts: anything that brings config goes here, to `loadConfig`. */
export interface Extensions {
  features?: readonly Feature[];
  channels?: readonly ChannelType[];
  stores?: readonly SessionStoreAdapter[];
  providers?: readonly ProviderAdapter[];
}

export interface House {
  readonly features: readonly Feature[];
  readonly channels: readonly ChannelType[];
  readonly stores: readonly SessionStoreAdapter[];
  readonly providers: readonly ProviderAdapter[];
  readonly layout: ConfigLayout;
}

/** Each kind's list, with no type or name twice (a clash stops start-up, naming it). */
function joined<T>(kind: string, builtin: readonly T[], added: readonly T[] | undefined, nameOf: (item: T) => string, problems: string[]): T[] {
  const all = [...builtin, ...(added ?? [])];
  const seen = new Set<string>();
  for (const item of all) {
    const name = nameOf(item);
    if (seen.has(name)) problems.push(`two ${kind} are named "${name}"`);
    seen.add(name);
  }
  return all;
}

/** The built-in parts with `extensions` added after them. */
export function makeHouse(extensions: Extensions = {}): House {
  const problems: string[] = [];
  const features = joined("features", BUILTIN_FEATURES, extensions.features, (f) => f.name, problems);
  const channels = joined("channel types", BUILTIN_CHANNELS, extensions.channels, (c) => c.type, problems);
  const stores = joined("session stores", BUILTIN_STORES, extensions.stores, (s) => s.type, problems);
  const providers = joined("model providers", BUILTIN_PROVIDERS, extensions.providers, (p) => p.type, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { features, channels, stores, providers, layout: new ConfigLayout({ features, stores, providers, channels }) };
}

let builtin: House | undefined;

/** The built-in parts alone (made once). */
export function builtinHouse(): House {
  builtin ??= makeHouse();
  return builtin;
}

const houses = new WeakMap<ConfigLayout, House>();

/**
 * Finds, reads and validates the config (`readConfig`) with the layout of
 * the built-in parts and `extensions`. The loaded config remembers them:
 * `bootstrap` and `prepare` make the runtime of the same parts.
 */
export function loadConfig(opts: LoadConfigOptions & { extensions?: Extensions }): LoadedConfig {
  const house = opts.extensions ? makeHouse(opts.extensions) : builtinHouse();
  houses.set(house.layout, house);
  return readConfig(opts, house.layout);
}

/** The parts a config was loaded with. */
export function houseOf(loaded: Pick<LoadedConfig, "layout">): House {
  return houses.get(loaded.layout) ?? builtinHouse();
}

/** The schema of the config with the built-in parts (for embedders and tests that make a config in code). */
export function builtinConfigSchema(): House["layout"]["schema"] {
  return builtinHouse().layout.schema;
}
