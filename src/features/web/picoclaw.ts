import { PROVIDER_NAMES } from "./config.js";

/**
 * PicoClaw's `tools.web` as ours: its providers we do not have (kagi,
 * sogou, gemini, glm_search, baidu_search) and its `prefer_native` and
 * `proxy` are left out with a note; `base_url` is our `api_base`;
 * `max_results` 0 (PicoClaw's "the most") is 10, and above 10 is 10, as
 * PicoClaw reads it; a null (PicoClaw's "none") is the default. Our own
 * form passes through unchanged.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

const THEIRS = ["kagi", "sogou", "gemini", "glm_search", "baidu_search"] as const;
const IGNORED = ["prefer_native", "proxy"] as const;

function provider(raw: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(raw)) if (value !== null) out[key] = value;
  if ("base_url" in out) {
    if (out.api_base === undefined && out.base_url !== "") out.api_base = out.base_url;
    delete out.base_url;
  }
  if (typeof out.max_results === "number" && (out.max_results === 0 || out.max_results > 10)) out.max_results = 10;
  return out;
}

export function webFromPicoclaw(raw: unknown, notes: string[]): unknown {
  if (!isObject(raw)) return raw;
  const out: Json = {};
  for (const [key, value] of Object.entries(raw)) if (value !== null) out[key] = value;
  const ignored = IGNORED.filter((key) => key in out);
  for (const key of ignored) delete out[key];
  if (ignored.length > 0) {
    notes.push(
      `tools.web: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} PicoClaw's and not read here (web_search is always offered when a provider is ready; no proxy); ignored`,
    );
  }
  const theirs = THEIRS.filter((key) => key in out);
  if (theirs.length > 0) {
    const on = theirs.filter((key) => isObject(out[key]) && (out[key] as Json).enabled === true);
    for (const key of theirs) delete out[key];
    const have = PROVIDER_NAMES.join(", ");
    notes.push(
      `tools.web: ${theirs.join(", ")}: PicoClaw's search providers, not in PicoClaw-TS (it has ${have}); ignored${on.length > 0 ? ` (${on.join(", ")} ${on.length === 1 ? "was" : "were"} enabled)` : ""}`,
    );
  }
  if (typeof out.provider === "string") out.provider = out.provider.trim().toLowerCase() || "auto";
  if (typeof out.provider === "string" && out.provider !== "auto" && !(PROVIDER_NAMES as readonly string[]).includes(out.provider)) {
    notes.push(`tools.web.provider: "${out.provider}" is not a provider of PicoClaw-TS; auto is used`);
    out.provider = "auto";
  }
  for (const name of PROVIDER_NAMES) if (isObject(out[name])) out[name] = provider(out[name] as Json);
  return out;
}
