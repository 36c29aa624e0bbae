import type { PathPart } from "../validation.js";
import { SECRET_NAME } from "./secrets.js";
import { maskedTemplate } from "./substitute.js";

const SECRET_KEYS = new Set(["api_key", "token", "password", "secret"]);
/** Maps of names to values (HTTP headers, a server's environment) whose secret-looking entries are masked. */
const NAMED_VALUES = new Set(["custom_headers", "headers", "env"]);

export const MASK = "********";

/** Secrets shorter than this are masked where they were written (`${VAR}`, key names), not searched for elsewhere. */
export const MIN_SECRET_LENGTH = 4;

/** Keys whose values are URLs that may carry a password or a secret query parameter. */
const URL_KEYS = new Set(["url", "api_base", "api_root"]);

function maskUrl(text: string): string {
  if (!URL.canParse(text)) return text;
  const url = new URL(text);
  if (url.password) url.password = MASK;
  for (const name of [...url.searchParams.keys()]) if (SECRET_NAME.test(name)) url.searchParams.set(name, MASK);
  return url.password || url.search !== new URL(text).search ? url.href : text;
}

/** What the loader knows about where secrets are (LoadedConfig's `secrets` and `substituted`). */
export interface KnownSecrets {
  /** Secret values: masked wherever they appear in a string. */
  secrets?: Iterable<string>;
  /** Strings that took values from `${VAR}`: shown as written, each `${VAR}` masked. */
  substituted?: readonly { path: readonly PathPart[]; template: string }[];
}

/**
 * A copy of the config with secrets replaced by a mask. By value: every
 * string that took a `${VAR}` shows its template with the variable masked,
 * and every known secret is masked wherever it appears. By place: every
 * non-empty `api_key` and `token`, headers or environment entries whose names
 * look secret, and URL passwords and secret query parameters.
 */
export function maskSecrets<T>(value: T, known: KnownSecrets = {}): T {
  const copy = mask(value, undefined);
  for (const { path, template } of known.substituted ?? []) setString(copy, path, maskedTemplate(template, MASK));
  const secrets = [...(known.secrets ?? [])].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return (secrets.length > 0 ? replaceEverywhere(copy, secrets) : copy) as T;
}

function mask(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((item) => mask(item, undefined));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (key !== undefined && NAMED_VALUES.has(key) && typeof v === "string" && SECRET_NAME.test(k)) out[k] = v ? MASK : v;
      else out[k] = mask(v, k);
    }
    return out;
  }
  if (typeof value === "string" && key !== undefined && SECRET_KEYS.has(key) && value !== "") return MASK;
  if (typeof value === "string" && key !== undefined && URL_KEYS.has(key)) return maskUrl(value);
  return value;
}

/** Sets the string at `path` (only when a string is there: the config may have moved on from the file). */
function setString(root: unknown, path: readonly PathPart[], text: string): void {
  let node = root as Record<PropertyKey, unknown> | undefined;
  for (const part of path.slice(0, -1)) {
    const next = node?.[part];
    if (next === null || typeof next !== "object") return;
    node = next as Record<PropertyKey, unknown>;
  }
  const last = path.at(-1);
  if (node && last !== undefined && typeof node[last] === "string" && node[last] !== MASK) node[last] = text;
}

function replaceEverywhere(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") {
    let out = value;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MASK);
    return out;
  }
  if (Array.isArray(value)) return value.map((item) => replaceEverywhere(item, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceEverywhere(v, secrets)]));
  }
  return value;
}
