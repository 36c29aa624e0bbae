import type { PathPart } from "../validation.js";

/** A `${VAR}` whose variable is not set, and where in the config it stood. */
export interface MissingVariable {
  path: PathPart[];
  variable: string;
}

/** A string of the config that took values from the environment: where it is, what it was written as, what came in. */
export interface SubstitutedString {
  path: PathPart[];
  /** The string as written, `${VAR}` and all. */
  template: string;
  /** The values that replaced its `${VAR}`s (secrets, as far as the gateway knows). */
  values: string[];
}

const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface Substitution {
  value: unknown;
  missing: MissingVariable[];
  substituted: SubstitutedString[];
}

/**
 * Replaces `${VAR}` in every string of a JSON value with the variable's value
 * (`$${VAR}` is a literal `${VAR}`). A string that names an unset variable is
 * left exactly as written and reported, so the caller decides whether that is
 * an error (it is only for the parts of the config that are used). Every
 * string that took a value is reported too: those values are secrets.
 */
export function substituteVariables(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  path: PathPart[] = [],
  out: Omit<Substitution, "value"> = { missing: [], substituted: [] },
): Substitution {
  if (typeof value === "string") {
    let unset = false;
    const values: string[] = [];
    const replaced = value.replace(REFERENCE, (whole, escaped: string | undefined, name: string) => {
      if (escaped) return whole.slice(1);
      const found = env[name];
      if (found === undefined) {
        out.missing.push({ path, variable: name });
        unset = true;
        return whole;
      }
      values.push(found);
      return found;
    });
    if (unset) return { value, ...out };
    if (values.length > 0) out.substituted.push({ path, template: value, values });
    return { value: replaced, ...out };
  }
  if (Array.isArray(value)) {
    return { value: value.map((item, i) => substituteVariables(item, env, [...path, i], out).value), ...out };
  }
  if (value !== null && typeof value === "object") {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] = substituteVariables(item, env, [...path, key], out).value;
    }
    return { value: result, ...out };
  }
  return { value, ...out };
}

/** The template with every `${VAR}` shown as `mask` (and `$${VAR}` as the literal it stands for). */
export function maskedTemplate(template: string, mask: string): string {
  return template.replace(REFERENCE, (whole, escaped: string | undefined) => (escaped ? whole.slice(1) : mask));
}
