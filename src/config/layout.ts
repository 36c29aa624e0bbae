import { z } from "zod";
import { ConfigError } from "../errors.js";
import type { ChannelEntry } from "./channel-schema.js";
import { type EnvVariable, envVariablesOf } from "./env-variables.js";
import type { PicoclawKnowledge } from "./picoclaw-compat.js";
import {
  CORE_TOOLS_KEYS,
  type Config,
  toolApprovalKey,
  type ProviderChoice,
  type Shape,
  type StoreChoice,
  agentsSchema,
  configSchema,
  sessionSchema,
} from "./schema.js";

/**
 * The config's layout: the core schema with what every registered feature
 * and adapter adds mounted in it. A feature declares its sections (a tool's
 * `tools.<key>`, or a section at a path such as `agents.defaults.subturn`);
 * a provider its entry options, a channel type its entry, a store its
 * options. From them come the schema the loader validates with (and the
 * JSON Schema file), the tool names `PICOCLAW_TOOLS_<KEY>_ENABLED` switches,
 * and the secrets `config check` masks and every log line is scrubbed of.
 */

/** The sections a feature owns in the config. */
export interface ConfigSections {
  /** `tools.<key>`: each one a tool's section (at least `enabled`, with its default); `PICOCLAW_TOOLS_<KEY>_ENABLED` sets `enabled`. */
  readonly tools?: Shape;
  /** Other sections by their path: `heartbeat` (top level), `tools.mcp`, `agents.defaults.subturn`, `session.<key>`. */
  readonly sections?: Shape;
  /** The secret values its sections hold (header values, an environment's entries...), beyond the keys named like secrets. */
  secrets?(own: OwnSections): Iterable<string>;
  /** How it reads PicoClaw's form of a section (by the section's path) where that differs from its own: `tools.mcp`. */
  readonly fromPicoclaw?: Readonly<Record<string, (raw: unknown, notes: string[]) => unknown>>;
}

/** A feature's sections as loaded, by the names it declared them with. */
export interface OwnSections {
  readonly tools: Readonly<Record<string, unknown>>;
  readonly sections: Readonly<Record<string, unknown>>;
}

/** A contribution of sections, with who made it (named in clash messages). */
export interface SectionOwner {
  readonly name: string;
  readonly config?: ConfigSections;
}

/** A channel type as the config knows it: `type` and its entry's schema (made with `channelEntry`). */
export interface ChannelChoice {
  readonly type: string;
  readonly schema: z.ZodObject;
  /** The secret values of an entry (its keys named like secrets, such as `token`, are found by name). */
  secrets?(entry: ChannelEntry): Iterable<string>;
  /** PicoClaw's entry of this type (`{type, enabled, allow_from, settings: {...}}`, under its name) as ours; what it leaves out gets a line in `notes`. */
  fromPicoclaw?(name: string, entry: Readonly<Record<string, unknown>>, notes: string[]): Record<string, unknown>;
}

/** A store as the config knows it, with its own options (`session.<type>`) if it has any. */
export interface StoreOption extends StoreChoice {
  readonly options?: z.ZodType;
  /** The secret values its options hold (a database URL's password), beyond keys named like secrets. */
  secrets?(options: unknown): Iterable<string>;
}

/** Vendors a provider serves by PicoClaw's name for them (`ollama`), each with its default `api_base`. */
export interface VendorChoice extends ProviderChoice {
  readonly vendors?: Readonly<Record<string, string>>;
  /** PicoClaw's `api_base` of one of its vendors written as its own (PicoClaw writes Anthropic's without `/v1`). */
  fromPicoclawBase?(apiBase: string): string;
}

export interface LayoutParts {
  readonly features: readonly SectionOwner[];
  readonly stores: readonly StoreOption[];
  readonly providers: readonly VendorChoice[];
  readonly channels: readonly ChannelChoice[];
}

/** Where sections may go, and the core's own keys there (a section may not take one). */
const PLACES = {
  top: { prefix: [], core: ["$schema", "gateway", "agents", "session", "model_list", "tools", "channel_list"] },
  tools: { prefix: ["tools"], core: [...CORE_TOOLS_KEYS] },
  agentDefaults: { prefix: ["agents", "defaults"], core: Object.keys(agentsSchema().unwrap().shape.defaults.unwrap().shape) },
  session: { prefix: ["session"], core: Object.keys(sessionSchema([{ type: "jsonl", description: "" }]).unwrap().shape) },
} as const;
type Place = keyof typeof PLACES;

function placeOf(path: string): { place: Place; key: string } | undefined {
  const parts = path.split(".");
  for (const place of ["agentDefaults", "tools", "session", "top"] as const) {
    const { prefix } = PLACES[place];
    if (parts.length === prefix.length + 1 && prefix.every((part, i) => parts[i] === part)) return { place, key: parts.at(-1)! };
  }
  return undefined;
}

/** A feature's sections of a loaded config, by the names it declared them with. */
export function sectionsOf(config: unknown, sections: ConfigSections | undefined): OwnSections {
  const at = (path: readonly string[]) => path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], config);
  return {
    tools: Object.fromEntries(Object.keys(sections?.tools ?? {}).map((key) => [key, at(["tools", key])])),
    sections: Object.fromEntries(Object.keys(sections?.sections ?? {}).map((path) => [path, at(path.split("."))])),
  };
}

/** The keys of `tools` that are no tool's section: the core's own, and the features' other sections there (`tools.mcp`). */
export function reservedToolKeys(features: readonly SectionOwner[]): string[] {
  const mounted = features.flatMap((feature) => Object.keys(feature.config?.sections ?? {}).filter((path) => /^tools\.[^.]+$/.test(path)));
  return [...CORE_TOOLS_KEYS, ...mounted.map((path) => path.slice("tools.".length))];
}

/**
 * A tool's section with the key every tool has, `approval`, beside the
 * feature's own: the same object schema extended, under the same default.
 * Undefined when the section is no object schema.
 */
function withApproval(schema: z.ZodType): z.ZodType | undefined {
  if (schema instanceof z.ZodObject) return schema.extend({ approval: toolApprovalKey });
  if (schema instanceof z.ZodPrefault || schema instanceof z.ZodDefault) {
    const inner = schema.unwrap();
    if (!(inner instanceof z.ZodObject)) return undefined;
    const extended = inner.extend({ approval: toolApprovalKey });
    const fallback = schema._zod.def.defaultValue as Record<string, unknown>;
    return schema instanceof z.ZodPrefault ? extended.prefault(fallback) : extended.default(fallback);
  }
  return undefined;
}

export class ConfigLayout {
  /** Every key's `PICOCLAW_<PATH>` variable, read from the composed schema once, when first asked. */
  envVariables(): ReadonlyMap<string, EnvVariable> {
    this.variables ??= envVariablesOf(z.toJSONSchema(this.schema, { io: "input", target: "draft-2020-12" }) as Parameters<typeof envVariablesOf>[0]);
    return this.variables;
  }

  /** The whole config's schema (its value holds the features' sections too; `Config` types the core). */
  readonly schema: z.ZodType<Config>;
  /** The keys of `tools` that are tool sections of the registered features, sorted. */
  readonly toolKeys: readonly string[];
  /** The keys of `tools` that are no tool's section (the core's own, and features' other sections there). */
  readonly reservedToolKeys: readonly string[];
  readonly parts: LayoutParts;
  /** Every section path a feature or store owns. */
  private readonly owned: ReadonlySet<string>;
  private variables: ReadonlyMap<string, EnvVariable> | undefined;

  constructor(parts: LayoutParts) {
    this.parts = parts;
    const mounted: Record<Place, Record<string, z.ZodType>> = { top: {}, tools: {}, agentDefaults: {}, session: {} };
    const owners = new Map<string, string>();
    const problems: string[] = [];
    const mount = (owner: string, path: string, schema: z.ZodType) => {
      const where = placeOf(path);
      if (!where) {
        problems.push(`${owner}: its config section "${path}" is in no place sections go (the top level, tools.<key>, agents.defaults.<key>, session.<key>)`);
        return;
      }
      const taken = owners.get(path) ?? ((PLACES[where.place].core as readonly string[]).includes(where.key) ? "the core" : undefined);
      if (taken !== undefined) {
        problems.push(`${owner}: its config section "${path}" is taken by ${taken}`);
        return;
      }
      owners.set(path, owner);
      mounted[where.place][where.key] = schema;
    };
    const toolKeys: string[] = [];
    for (const feature of parts.features) {
      for (const [key, schema] of Object.entries(feature.config?.tools ?? {})) {
        const section = withApproval(schema);
        if (section === undefined) {
          problems.push(
            `feature "${feature.name}": its tool section "tools.${key}" is not an object schema (z.strictObject, optionally with .prefault or .default)`,
          );
          continue;
        }
        mount(`feature "${feature.name}"`, `tools.${key}`, section);
        toolKeys.push(key);
      }
      for (const [path, schema] of Object.entries(feature.config?.sections ?? {})) mount(`feature "${feature.name}"`, path, schema);
    }
    for (const store of parts.stores) if (store.options) mount(`store "${store.type}"`, `session.${store.type}`, store.options);
    if (problems.length > 0) throw new ConfigError(problems);
    this.owned = new Set(owners.keys());
    this.toolKeys = toolKeys.sort();
    this.reservedToolKeys = reservedToolKeys(parts.features);
    this.schema = configSchema({
      stores: parts.stores,
      providers: parts.providers,
      channels: parts.channels.map((channel) => channel.schema),
      top: mounted.top,
      tools: mounted.tools,
      agentDefaults: mounted.agentDefaults,
      session: mounted.session,
    }) as unknown as z.ZodType<Config>;
  }

  /** The secret values the features and channel types know of in a loaded config. */
  contributedSecrets(config: { channel_list: readonly ChannelEntry[]; session: Readonly<Record<string, unknown>> }): string[] {
    const found: string[] = [];
    for (const feature of this.parts.features) {
      if (feature.config?.secrets) found.push(...feature.config.secrets(sectionsOf(config, feature.config)));
    }
    for (const store of this.parts.stores) {
      const options = config.session[store.type];
      if (store.secrets && options !== undefined) found.push(...store.secrets(options));
    }
    for (const entry of config.channel_list) {
      const channel = this.parts.channels.find((c) => c.type === entry.type);
      if (channel?.secrets) found.push(...channel.secrets(entry));
    }
    return found;
  }

  /** What reading a PicoClaw config needs to know of the registered providers, channel types and sections. */
  picoclaw(): PicoclawKnowledge {
    return {
      providers: this.parts.providers.map((p) => p.type),
      vendors: this.vendors(),
      channels: this.parts.channels,
      owns: (path) => this.owned.has(path),
      sectionReader: (path) => this.parts.features.find((f) => f.config?.fromPicoclaw?.[path])?.config?.fromPicoclaw?.[path],
      baseReader: (provider) => {
        const found = this.parts.providers.find((p) => p.type === provider);
        return found?.fromPicoclawBase?.bind(found);
      },
    };
  }

  /** Every vendor a registered provider serves, by PicoClaw's name: its provider and default `api_base`. */
  vendors(): Record<string, { provider: string; apiBase: string }> {
    return Object.fromEntries(
      this.parts.providers.flatMap((provider) => Object.entries(provider.vendors ?? {}).map(([name, apiBase]) => [name, { provider: provider.type, apiBase }])),
    );
  }
}
