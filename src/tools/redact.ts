/**
 * The one scrubber of configured secrets (README, "Secrets"): what a tool
 * returns or throws and what an MCP server writes on stderr pass through it
 * before they reach the model, the user or the log, so a secret a tool or
 * server gives away (its own key in an error message, an environment dump)
 * shows as `***`.
 */

/** Text in, the same text without any configured secret out. */
export type Redact = (text: string) => string;

export const REDACTED = "***";

/** Shorter values are not searched for: they would match ordinary words and numbers. */
export const MIN_REDACTED_LENGTH = 4;

export const noRedaction: Redact = (text) => text;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A scrubber for `secrets`: each one (of MIN_REDACTED_LENGTH characters or
 * more) is replaced by `***`, as written and in the forms it takes inside
 * JSON strings and URLs.
 */
export function redactor(secrets: Iterable<string>): Redact {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_REDACTED_LENGTH) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
    forms.add(encodeURIComponent(secret));
  }
  if (forms.size === 0) return noRedaction;
  // Longest first, so a secret that contains another is replaced whole.
  const pattern = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join("|"),
    "g",
  );
  return (text) => (text.length < MIN_REDACTED_LENGTH ? text : text.replace(pattern, REDACTED));
}
