const SECRET_KEYS = new Set(["api_key", "token"]);
const SECRET_HEADER = /auth|key|token|secret|cookie|pass/i;
/** Maps of names to values (HTTP headers, a server's environment) whose secret-looking entries are masked. */
const NAMED_VALUES = new Set(["custom_headers", "headers", "env"]);

export const MASK = "********";

/** Keys whose values are URLs that may carry a password or a secret query parameter. */
const URL_KEYS = new Set(["url", "api_base", "api_root"]);

function maskUrl(text: string): string {
  if (!URL.canParse(text)) return text;
  const url = new URL(text);
  if (url.password) url.password = MASK;
  for (const name of [...url.searchParams.keys()]) if (SECRET_HEADER.test(name)) url.searchParams.set(name, MASK);
  return url.password || url.search !== new URL(text).search ? url.href : text;
}

/**
 * A copy of the config with secrets replaced by a mask: every non-empty
 * `api_key` and `token`, and headers or environment entries whose names look secret.
 */
export function maskSecrets<T>(value: T): T {
  return mask(value, undefined) as T;
}

function mask(value: unknown, key: string | undefined): unknown {
  if (Array.isArray(value)) return value.map((item) => mask(item, undefined));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (key !== undefined && NAMED_VALUES.has(key) && typeof v === "string" && SECRET_HEADER.test(k)) out[k] = v ? MASK : v;
      else out[k] = mask(v, k);
    }
    return out;
  }
  if (typeof value === "string" && key !== undefined && SECRET_KEYS.has(key) && value !== "") return MASK;
  if (typeof value === "string" && key !== undefined && URL_KEYS.has(key)) return maskUrl(value);
  return value;
}
