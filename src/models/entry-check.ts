import type { ModelEntry } from "../config/schema.js";

/** The Messages API requires max_tokens; this fits every current Claude model (the Anthropic adapter sends it when the entry sets none). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * A used model entry checked whole before its first request: what would make
 * every request fail (an unusable `api_base`, a key or header HTTP cannot
 * carry) and options its provider does not take. Messages name the field
 * (the caller adds `model_list[i].`) and never quote a secret.
 */

/** What HTTP cannot carry, as it would otherwise surface (with the secret in it) from the first request. */
const UNSENDABLE = /[^\t\x20-\x7e\x80-\xff]/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Options only one provider takes, and what to use instead elsewhere. */
const ONLY_FOR: Record<string, { provider: ModelEntry["provider"]; otherwise: string }> = {
  thinking: { provider: "anthropic", otherwise: "an OpenAI-compatible reasoning model takes reasoning_effort" },
  cache: { provider: "anthropic", otherwise: "OpenAI-compatible servers cache prompts by themselves" },
  max_tokens_field: { provider: "openai", otherwise: "the Messages API always takes max_tokens" },
  reasoning_effort: { provider: "openai", otherwise: "for Claude, use thinking" },
};

export function entryProblems(entry: ModelEntry): string[] {
  return [...connectionProblems(entry), ...optionProblems(entry)];
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

function optionProblems(entry: ModelEntry): string[] {
  const problems: string[] = [];
  for (const [key, rule] of Object.entries(ONLY_FOR)) {
    if (entry[key as keyof ModelEntry] !== undefined && entry.provider !== rule.provider) {
      problems.push(`${key}: only for provider "${rule.provider}" (this entry is "${entry.provider}"; ${rule.otherwise})`);
    }
  }
  if (entry.provider === "builtin" && entry.vision === true)
    problems.push('vision: the built-in model reads text only; leave vision out for provider "builtin"');
  if (entry.provider !== "anthropic") return problems;
  if (entry.temperature !== undefined && entry.temperature > 1) problems.push('temperature: must be <= 1 for provider "anthropic"');
  if (entry.thinking) {
    const maxTokens = entry.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
    if (entry.thinking.budget_tokens >= maxTokens) {
      problems.push(
        `thinking.budget_tokens: must be less than max_tokens (${maxTokens}${entry.max_tokens === undefined ? ", the default" : ""}); raise max_tokens, which counts the thinking too`,
      );
    }
    if (entry.temperature !== undefined && entry.temperature !== 1) {
      problems.push("temperature: the API takes no temperature but 1 with thinking on; leave temperature out");
    }
  }
  return problems;
}
