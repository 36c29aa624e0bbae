import type { Config } from "./schema.js";

/**
 * Which values of a loaded config are secrets, found by where they came
 * from and by their place in the config, never only by a key's name:
 *
 * - every value a `${VAR}` was replaced with (from the environment or a `.env`);
 * - every `.env` value whose variable is named like a secret (`OPENAI_API_KEY`,
 *   `DB_PASSWORD`, `MCP_TOKEN`...);
 * - `PICOCLAW_GATEWAY_TOKEN`;
 * - what the file holds in the places secrets go: any `api_key`, `token`,
 *   `password` or `secret` (the gateway's token, a channel's bot token),
 *   header values named like secrets (or `Bearer`/`Basic` credentials), an
 *   MCP server's environment entries named like secrets, a URL's password
 *   and secret-named query parameters, `--password=x` / `--api-key x` style
 *   arguments, and `extra_body` values under secret-named keys;
 * - and, anywhere in the file, values shaped like secrets whatever their
 *   place (`shapedSecrets`): a URL's password (`postgres://app:pw@db`), a
 *   `Password=...;` pair of a connection string, and the token shapes of
 *   well-known services (`sk-...`, `ghp_...`, `xoxb-...`, `AKIA...`,
 *   JSON web tokens, private key blocks).
 *
 * What a feature's sections hold in such places (an MCP server's headers,
 * environment and arguments) its config declaration reports, with the
 * helpers below; the loader adds them here.
 *
 * `config check` masks them wherever they appear; tool results, MCP server
 * stderr and the log are scrubbed of them.
 */

/** A name that says its value is a secret (a header, a variable, a query parameter, a flag, a body key). */
export const SECRET_NAME = /auth|key|token|secret|cookie|pass|credential|signature/i;

/** Credentials written with their scheme: the part after it is the secret. */
const CREDENTIAL = /^\s*(?:Bearer|Basic|Token)\s+(\S+)\s*$/i;

export interface SecretSources {
  /** Values `${VAR}` was replaced with. */
  substituted: Iterable<string>;
  /** Entries of the `.env` files read. */
  dotenv: Readonly<Record<string, string>>;
  /** Values environment overrides set that are secrets (the gateway token). */
  overrides: Iterable<string>;
  /** What the features and channel types found in their own sections (ConfigLayout.contributedSecrets). */
  contributed: Iterable<string>;
}

export function collectSecrets(config: Config, sources: SecretSources): Set<string> {
  const found = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === "string" && value !== "") found.add(value);
  };
  for (const value of sources.substituted) add(value);
  for (const [name, value] of Object.entries(sources.dotenv)) if (SECRET_NAME.test(name)) add(value);
  for (const value of sources.overrides) add(value);
  for (const value of sources.contributed) add(value);

  keyedSecrets(config, add);
  everyString(config, (text) => shapedSecrets(text, add));
  for (const entry of config.model_list) {
    headerSecrets(entry.custom_headers, add);
    urlSecrets(entry.api_base, add);
    bodySecrets(entry.extra_body, false, add);
  }
  // Every header of the trace exporter is a secret (a vendor's API key, whatever its name).
  for (const value of Object.values(config.telemetry.otlp.headers)) add(value);
  urlSecrets(config.telemetry.otlp.endpoint, add);
  return found;
}

/** Token shapes of well-known services and formats: the whole match is the secret. */
const TOKEN_SHAPES = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{30,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\bhf_[A-Za-z0-9]{30,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
/** `Password=...;`, `pwd=...&`, `api_key: ...`: a secret-named pair inside a longer text (a connection string). */
const SECRET_PAIR = /(?:^|[\s;&,?])(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key)\s*[=:]\s*([^\s;&,]+)/gi;

/** Secrets found by their shape in one text, wherever it stands: a URL's password, a secret-named pair, a known token shape. */
export function shapedSecrets(text: string, add: (value: string) => void): void {
  if (text.length < 8 || text.length > 64 * 1024) return;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/\s]*@/i.test(text)) urlSecrets(text, add);
  for (const match of text.matchAll(SECRET_PAIR)) if (match[1]!.length >= 4) add(match[1]!);
  for (const shape of TOKEN_SHAPES) for (const match of text.matchAll(shape)) add(match[0]);
}

/** Every string value of a JSON value, at any depth. */
function everyString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const item of value) everyString(item, visit);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) everyString(item, visit);
}

/** Keys whose string value is a secret wherever they stand (`gateway.token`, `model_list[].api_key`, a channel's `token`). */
const SECRET_KEY = /^(?:api_key|token|password|secret)$/;

function keyedSecrets(value: unknown, add: (value: unknown) => void): void {
  if (Array.isArray(value)) for (const item of value) keyedSecrets(item, add);
  else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (SECRET_KEY.test(key) && typeof item === "string") add(item);
      else keyedSecrets(item, add);
    }
  }
}

/** Header values named like secrets, and the credential of a `Bearer`/`Basic`/`Token` value. */
export function headerSecrets(headers: Readonly<Record<string, string>> | undefined, add: (value: string) => void): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (SECRET_NAME.test(name)) add(value);
    const credential = CREDENTIAL.exec(value)?.[1];
    if (credential) add(credential);
  }
}

/** A URL's password (as written and decoded) and its secret-named query parameters. */
export function urlSecrets(text: string | undefined, add: (value: string) => void): void {
  if (text === undefined || !URL.canParse(text)) return;
  const url = new URL(text);
  if (url.password) {
    add(url.password);
    try {
      add(decodeURIComponent(url.password));
    } catch {
      // not percent-encoded text: the raw form is the secret
    }
  }
  // `searchParams` is made on first read (some 2 ms the first time in a process): only for a URL that has a query.
  if (url.search !== "") for (const [name, value] of url.searchParams) if (SECRET_NAME.test(name)) add(value);
}

/** `--password=x`, `--api-key x`, `-token=x`: the value of a flag named like a secret. */
export function argumentSecrets(args: readonly string[], add: (value: string) => void): void {
  args.forEach((arg, i) => {
    const flag = /^--?([A-Za-z][\w.-]*)(?:=(.*))?$/s.exec(arg);
    if (!flag || !SECRET_NAME.test(flag[1]!)) return;
    if (flag[2] !== undefined) add(flag[2]);
    else if (i + 1 < args.length && !args[i + 1]!.startsWith("-")) add(args[i + 1]!);
  });
}

/** The values of a map of names (an environment) whose names look secret. */
export function namedSecrets(values: Readonly<Record<string, string>> | undefined, add: (value: string) => void): void {
  for (const [name, value] of Object.entries(values ?? {})) if (SECRET_NAME.test(name)) add(value);
}

/** String values under secret-named keys, at any depth. */
function bodySecrets(value: unknown, secret: boolean, add: (value: string) => void): void {
  if (typeof value === "string") {
    if (secret) add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) bodySecrets(item, secret, add);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) bodySecrets(item, secret || SECRET_NAME.test(key), add);
  }
}
