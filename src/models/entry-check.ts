import type { ModelEntry } from "../config/schema.js";
import type { ProviderAdapter } from "./adapter.js";

/**
 * A used model entry checked whole before its first request: what would make
 * every request fail (an unusable `api_base`, a key or header HTTP cannot
 * carry), options of another provider, and what its own provider refuses
 * (`check`). Messages name the field (the caller adds `model_list[i].`) and
 * never quote a secret.
 */

/** What HTTP cannot carry, as it would otherwise surface (with the secret in it) from the first request. */
const UNSENDABLE = /[^\t\x20-\x7e\x80-\xff]/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function entryProblems(entry: ModelEntry, providers: readonly ProviderAdapter[]): string[] {
  const own = providers.find((p) => p.type === entry.provider);
  return [...connectionProblems(entry), ...foreignOptions(entry, providers), ...(own?.check?.(entry) ?? [])];
}

function connectionProblems(entry: ModelEntry): string[] {
  const problems: string[] = [];
  if (entry.api_base !== undefined) {
    if (!URL.canParse(entry.api_base)) problems.push(`api_base: not a URL: ${JSON.stringify(entry.api_base)}`);
    else {
      const url = new URL(entry.api_base);
      if (url.protocol !== "http:" && url.protocol !== "https:") problems.push("api_base: must be an http:// or https:// URL");
      if (url.username || url.password) problems.push("api_base: must not hold a user name or password; send credentials with api_key or custom_headers");
    }
  }
  if (entry.api_key !== undefined && UNSENDABLE.test(entry.api_key)) {
    problems.push("api_key: holds a line break or another character an HTTP header cannot carry (check the variable it comes from)");
  }
  for (const [name, value] of Object.entries(entry.custom_headers ?? {})) {
    if (!HEADER_NAME.test(name)) problems.push(`custom_headers: ${JSON.stringify(name)} is not a valid header name`);
    else if (UNSENDABLE.test(value)) problems.push(`custom_headers.${name}: holds a line break or another character an HTTP header cannot carry`);
  }
  return problems;
}

/** Options the entry carries that only another provider takes. */
function foreignOptions(entry: ModelEntry, providers: readonly ProviderAdapter[]): string[] {
  const problems: string[] = [];
  for (const provider of providers) {
    if (provider.type === entry.provider) continue;
    for (const [key, option] of Object.entries(provider.options ?? {})) {
      if ((entry as Record<string, unknown>)[key] !== undefined) {
        problems.push(`${key}: only for provider "${provider.type}" (this entry is "${entry.provider}"; ${option.otherwise})`);
      }
    }
  }
  return problems;
}
