import type { z } from "zod";

/**
 * Turning zod issues into one short line each, named by JSON path
 * (`model_list[1].api_key: expected string, received number`). Used for the
 * config file, AGENT.md frontmatter, HTTP bodies and tool arguments.
 */

export type PathPart = PropertyKey;

export function formatPath(path: readonly PathPart[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = String(part);
      out += /^[A-Za-z_$][\w$]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** The JSON type name of a value, as a person would say it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (value === undefined) return "nothing";
  if (typeof value === "number" && Number.isInteger(value)) return "integer";
  return typeof value;
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      const input = (issue as { input?: unknown }).input;
      if (input === undefined) return `required (expected ${issue.expected})`;
      return `expected ${issue.expected}, received ${jsonTypeOf(input)}`;
    }
    case "invalid_key":
      return `invalid name: ${issue.issues.map((inner) => describeIssue(inner)).join("; ")}`;
    case "unrecognized_keys":
      return issue.keys.length === 1 ? `unknown key "${issue.keys[0]}"` : `unknown keys ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union": {
      // A discriminated union (channel_list's `type`) names the values its discriminator may take.
      const options = (issue as { discriminator?: string; options?: unknown[] }).options;
      if (Array.isArray(options)) return `expected one of ${options.map((v) => JSON.stringify(v)).join(", ")}`;
      return issue.message;
    }
    case "too_small":
      if (issue.origin === "number" || issue.origin === "int") return `must be ${issue.inclusive === false ? ">" : ">="} ${String(issue.minimum)}`;
      if (issue.origin === "string") return `must not be shorter than ${String(issue.minimum)} characters`;
      if (issue.origin === "array") return `must have at least ${String(issue.minimum)} items`;
      return issue.message;
    case "too_big":
      if (issue.origin === "number" || issue.origin === "int") return `must be ${issue.inclusive === false ? "<" : "<="} ${String(issue.maximum)}`;
      if (issue.origin === "string") return `must not be longer than ${String(issue.maximum)} characters`;
      if (issue.origin === "array") return `must have at most ${String(issue.maximum)} items`;
      return issue.message;
    default:
      return issue.message;
  }
}

/**
 * One line per issue: `<prefix><path>: <problem>`. `rename` lets a caller
 * name something else than the JSON path (an environment variable).
 */
export function describeIssues(error: z.core.$ZodError, opts: { prefix?: PathPart[]; rename?: (path: string) => string | undefined } = {}): string[] {
  return error.issues.map((issue) => {
    const full = [...(opts.prefix ?? []), ...issue.path];
    const path = formatPath(full);
    const name = opts.rename?.(path) ?? path;
    return name ? `${name}: ${describeIssue(issue)}` : describeIssue(issue);
  });
}
