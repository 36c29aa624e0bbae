import type { Env } from "../../config/load.js";
import { SECRET_NAME } from "../../config/secrets.js";
import type { Redact } from "../../tools/redact.js";

/**
 * The environment of the processes features start for the model (exec's
 * commands): the gateway's own, without what a command has no business
 * seeing: every `PICOCLAW_*` variable (the gateway's token among them),
 * every variable named like a secret (`OPENAI_API_KEY`, `DB_PASSWORD`,
 * `GITHUB_TOKEN`...), and every variable whose value holds one of the
 * config's secrets, whatever its name.
 */
export function processEnvironment(env: Env, redact: Redact): Readonly<Record<string, string>> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.startsWith("PICOCLAW_") || SECRET_NAME.test(name)) continue;
    if (redact(value) !== value) continue;
    kept[name] = value;
  }
  return Object.freeze(kept);
}
