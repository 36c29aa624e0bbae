import type { PathPart } from "../validation.js";

/** A `${VAR}` whose variable is not set, and where in the config it stood. */
export interface MissingVariable {
  path: PathPart[];
  variable: string;
}

const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${VAR}` in every string of a JSON value with the variable's value
 * (`$${VAR}` is a literal `${VAR}`). A string that names an unset variable is
 * left exactly as written and reported, so the caller decides whether that is
 * an error (it is only for the parts of the config that are used).
 */
export function substituteVariables(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: PathPart[] = [],
  missing: MissingVariable[] = [],
): { value: unknown; missing: MissingVariable[] } {
  if (typeof value === "string") {
    let unset = false;
    const replaced = value.replace(REFERENCE, (whole, escaped: string | undefined, name: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found === undefined) {
        missing.push({ path, variable: name });
        unset = true;
        return whole;
      }
      return found;
    });
    return { value: unset ? value : replaced, missing };
  }
  if (Array.isArray(value)) {
    return { value: value.map((item, i) => substituteVariables(item, env, [...path, i], missing).value), missing };
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = substituteVariables(item, env, [...path, key], missing).value;
    }
    return { value: out, missing };
  }
  return { value, missing };
}
