import { UNSUPPORTED_VENDORS } from "./vendors.js";

/**
 * A config written for PicoClaw (Go) read as ours, before validation. Where
 * PicoClaw names a thing differently, its name is taken: `vendor/model`
 * model strings and vendor names as `provider` (with the vendor's default
 * `api_base`), `api_keys` lists, `agents.defaults.model`, the `channel_list`
 * object with `settings`, MCP servers with `enabled`. What PicoClaw has and
 * we do not (heartbeat, skills, hooks, its own built-in tools...) is dropped
 * with a note naming it. `_comment` keys, PicoClaw's comments, go silently.
 * Anything else stays as written, so our strict schema still names every
 * unknown key. What PicoClaw-TS knows comes from the layout: the registered
 * providers and their vendors (each reads PicoClaw's base URL of its own),
 * the channel types (each turns PicoClaw's entry into its own), and the
 * sections features own (PicoClaw's key there is read, not dropped, by the
 * feature's reader when its form differs).
 */

/** What the registered providers, channel types and features make known (ConfigLayout.picoclaw()). */
export interface PicoclawKnowledge {
  readonly providers: readonly string[];
  /** Vendor name → our provider and its default `api_base`. */
  readonly vendors: Readonly<Record<string, { provider: string; apiBase: string }>>;
  /** Channel types, each with how it reads PicoClaw's entry (`{type, enabled, allow_from, settings...}`) as its own. */
  readonly channels: readonly {
    type: string;
    fromPicoclaw?(name: string, entry: Readonly<Record<string, unknown>>, notes: string[]): Record<string, unknown>;
  }[];
  /** Whether a section path (`tools.exec`, `agents.defaults.workspace`, `heartbeat`) is one a feature owns here. */
  owns(path: string): boolean;
  /** How the feature that owns a section reads PicoClaw's form of it (`tools.mcp`), when it differs from ours. */
  sectionReader(path: string): ((raw: unknown, notes: string[]) => unknown) | undefined;
  /** How a provider writes PicoClaw's `api_base` of one of its vendors as its own (Anthropic's without `/v1`). */
  baseReader(provider: string): ((apiBase: string) => string) | undefined;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** PicoClaw's top-level sections that PicoClaw-TS does not have. */
const PICOCLAW_ONLY = ["version", "evolution", "heartbeat", "devices", "voice", "hooks", "events", "llm", "stt", "rate_limits"];
/** PicoClaw's `agents.defaults` keys that PicoClaw-TS does not have. */
const PICOCLAW_AGENT_DEFAULTS = [
  "data_dir",
  "summarize_message_threshold",
  "summarize_token_percent",
  "split_on_marker",
  "max_llm_retries",
  "llm_retry_backoff_secs",
  "tool_feedback",
];
/** PicoClaw's model entry keys that PicoClaw-TS does not have. */
const PICOCLAW_ENTRY_KEYS = ["thinking_level", "auth_method", "tool_schema_transform"];
/** PicoClaw's own tools (and its tool-wide path lists), which PicoClaw-TS does not have. */
const PICOCLAW_TOOL_KEYS = [
  "cron",
  "exec",
  "skills",
  "media_cleanup",
  "append_file",
  "edit_file",
  "read_file",
  "write_file",
  "list_dir",
  "find_skills",
  "install_skill",
  "message",
  "send_tts",
  "i2c",
  "spi",
  "serial",
  "memory",
  "android",
];

function dropComments(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropComments);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).flatMap(([key, inner]) => (key === "_comment" ? [] : [[key, dropComments(inner)]])));
}

function entry(raw: Json, index: number, notes: string[], known: PicoclawKnowledge): Json | null {
  const out: Json = { ...raw };
  const where = `model_list[${index}]${typeof raw.model_name === "string" ? ` (${raw.model_name})` : ""}`;
  const ignored = PICOCLAW_ENTRY_KEYS.filter((key) => key in out);
  for (const key of ignored) delete out[key];
  if (ignored.length > 0) notes.push(`${where}: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} PicoClaw's and not read here; ignored`);
  if (Array.isArray(out.api_keys)) {
    const keys = out.api_keys;
    delete out.api_keys;
    if (out.api_key === undefined && keys.length > 0) out.api_key = keys[0];
    if (keys.length > 1) notes.push(`${where}: api_keys holds ${keys.length} keys; only the first is used (no key rotation here)`);
  }
  let vendor: string | undefined;
  if (typeof out.provider === "string" && !known.providers.includes(out.provider)) {
    vendor = out.provider;
  } else if (out.provider === undefined && typeof out.model === "string" && out.model.includes("/")) {
    const [prefix, ...rest] = out.model.split("/");
    if (prefix! in known.vendors || (UNSUPPORTED_VENDORS as readonly string[]).includes(prefix!)) {
      vendor = prefix;
      out.model = rest.join("/");
    }
  }
  if (vendor !== undefined) {
    if ((UNSUPPORTED_VENDORS as readonly string[]).includes(vendor)) {
      notes.push(`${where}: vendor "${vendor}" needs a login or a protocol PicoClaw-TS does not speak; entry ignored`);
      return null;
    }
    const served = known.vendors[vendor];
    if (!served) return out; // an unknown provider: the schema names it
    out.provider = served.provider;
    if (out.api_base === undefined || out.api_base === "") out.api_base = served.apiBase;
    const base = known.baseReader(served.provider);
    if (base && typeof out.api_base === "string") out.api_base = base(out.api_base);
  } else if (out.provider === undefined && out.model !== undefined) {
    // PicoClaw's rule: a model without a vendor speaks OpenAI's format.
    out.provider = "openai";
  }
  return out;
}

function modelList(raw: unknown[], notes: string[], known: PicoclawKnowledge): unknown[] {
  const out: unknown[] = [];
  const seen = new Set<string>();
  for (const [index, item] of raw.entries()) {
    if (!isObject(item)) {
      out.push(item);
      continue;
    }
    const made = entry(item, index, notes, known);
    if (!made) continue;
    const name = made.model_name;
    if (typeof name === "string" && seen.has(name)) {
      notes.push(`model_list[${index}] (${name}): a second entry of one model_name (PicoClaw's load balancing) is not supported; the first is used`);
      continue;
    }
    if (typeof name === "string") seen.add(name);
    out.push(made);
  }
  return out;
}

function agentDefaults(raw: Json, notes: string[], known: PicoclawKnowledge): Json {
  const out: Json = { ...raw };
  // Its context_window (every model's) becomes that of each model entry that sets none: see fromPicoclaw.
  delete out.context_window;
  if ("model" in out) {
    if (out.model_name === undefined) out.model_name = out.model;
    else notes.push("agents.defaults.model: model_name is given too; model is ignored");
    delete out.model;
  }
  const ignored = PICOCLAW_AGENT_DEFAULTS.filter((key) => key in out && !known.owns(`agents.defaults.${key}`));
  for (const key of ignored) delete out[key];
  if (ignored.length > 0) notes.push(`agents.defaults: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} PicoClaw's and not read here; ignored`);
  return out;
}

/** PicoClaw's channel object (`{"telegram": {type, enabled, allow_from, settings: {token...}}}`) as our list: each channel type reads its own entries. */
function channelObject(raw: Json, notes: string[], known: PicoclawKnowledge): unknown[] {
  const out: unknown[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (!isObject(value)) {
      out.push(value);
      continue;
    }
    const type = value.type ?? name;
    if (value.enabled === false) continue;
    const channel = known.channels.find((c) => c.type === type);
    if (!channel) {
      const types = known.channels.map((c) => c.type).join(", ") || "none";
      notes.push(`channel_list.${name}: channel type "${String(type)}" is not supported by PicoClaw-TS (it has: ${types}); ignored`);
      continue;
    }
    const { enabled: _enabled, ...rest } = value;
    out.push(channel.fromPicoclaw ? channel.fromPicoclaw(name, value, notes) : { name, ...rest, type });
  }
  return out;
}

/** PicoClaw's built-in tools' sections are dropped with one note; every other section stays for the schema. */
function tools(raw: Json, notes: string[], known: PicoclawKnowledge): Json {
  const out: Json = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (PICOCLAW_TOOL_KEYS.includes(name) && !known.owns(`tools.${name}`)) {
      dropped.push(name);
      continue;
    }
    const reader = known.sectionReader(`tools.${name}`);
    if (reader) {
      out[name] = reader(value, notes);
      continue;
    }
    out[name] = value;
  }
  if (dropped.length > 0)
    notes.push(`tools: ${dropped.join(", ")}: PicoClaw's own tools, not in PicoClaw-TS; ignored (plugins and MCP servers add tools here)`);
  return out;
}

export function fromPicoclaw(raw: Json, known: PicoclawKnowledge): { config: Json; notes: string[] } {
  const notes: string[] = [];
  const config = dropComments(raw) as Json;
  const ignored = PICOCLAW_ONLY.filter((key) => key in config && !known.owns(key));
  for (const key of ignored) delete config[key];
  // A top-level section a feature owns (heartbeat), in PicoClaw's form, read by that feature's reader.
  for (const key of PICOCLAW_ONLY) {
    const reader = key in config ? known.sectionReader(key) : undefined;
    if (reader) config[key] = reader(config[key], notes);
  }
  if (ignored.length > 0) notes.push(`${ignored.join(", ")}: PicoClaw's, not supported by PicoClaw-TS; ignored`);
  if (Array.isArray(config.model_list)) config.model_list = modelList(config.model_list, notes, known);
  const window = isObject(config.agents) && isObject(config.agents.defaults) ? config.agents.defaults.context_window : undefined;
  if (window !== undefined && Array.isArray(config.model_list)) {
    config.model_list = config.model_list.map((item) => (isObject(item) && item.context_window === undefined ? { ...item, context_window: window } : item));
  }
  if (isObject(config.agents) && isObject(config.agents.defaults))
    config.agents = { ...config.agents, defaults: agentDefaults(config.agents.defaults, notes, known) };
  if (isObject(config.channel_list)) config.channel_list = channelObject(config.channel_list, notes, known);
  if (isObject(config.tools)) config.tools = tools(config.tools, notes, known);
  if (isObject(config.gateway)) {
    const gateway = { ...config.gateway };
    const ignoredGateway = ["hot_reload", "log_level"].filter((key) => key in gateway);
    for (const key of ignoredGateway) delete gateway[key];
    if (ignoredGateway.length > 0)
      notes.push(
        `gateway: ${ignoredGateway.join(", ")} ${ignoredGateway.length === 1 ? "is" : "are"} PicoClaw's and not read here (the log level is PICOCLAW_LOG_LEVEL); ignored`,
      );
    config.gateway = gateway;
  }
  return { config, notes };
}
