import type { z } from "zod";

/**
 * Turning zod issues into one short line each, named by JSON path
 * (`model_list[1].api_key: expected string, received number`). Used for the
 * config file, AGENT.md frontmatter, HTTP bodies and tool arguments.
 */

export type PathPart = PropertyKey;

/**
 * `schema.safeParse(value)`, with the input in each issue when it fails
 * (`reportInput`, which describeIssues quotes). Parsed without options
 * first: in zod 4.6 a parse given any options was measured about 5x slower
 * (0.5 → 2.5 µs a streamed answer's event; its context is then an object
 * of another shape for every check), so only a value that failed is
 * parsed again, reporting. zod's parse is pure here (no transforms with
 * effects), so the second gives the first's issues, with their inputs.
 */
export function parseReporting<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed : schema.safeParse(value, { reportInput: true });
}

/** A name as an error quotes it: JSON-quoted, and cut to `max` characters (a 100 KB name is not echoed whole). */
export function quoted(value: string, max = 80): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

export function formatPath(path: readonly PathPart[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = String(part);
      out += /^[A-Za-z_$][\w$]{0,63}$/.test(key) ? (out ? `.${key}` : key) : `[${quoted(key, 64)}]`;
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
      // JSON's 1e400 parses to Infinity, which zod calls "expected number, received number".
      if (typeof input === "number" && !Number.isFinite(input)) {
        return `expected a finite ${issue.expected}, received ${String(input)}${Number.isNaN(input) ? "" : " (a number beyond a double's range)"}`;
      }
      return `expected ${issue.expected}, received ${jsonTypeOf(input)}`;
    }
    case "invalid_key":
      return `invalid name: ${issue.issues.map((inner) => describeIssue(inner)).join("; ")}`;
    case "unrecognized_keys":
      if (issue.keys.length === 1) return `unknown key ${quoted(issue.keys[0]!, 64)}`;
      return `unknown keys ${issue.keys
        .slice(0, 10)
        .map((k) => quoted(k, 64))
        .join(", ")}${issue.keys.length > 10 ? ` and ${issue.keys.length - 10} more` : ""}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union": {
      // A discriminated union (channel_list's `type`) names the values its discriminator may take.
      const options = (issue as { discriminator?: string; options?: unknown[] }).options;
      if (Array.isArray(options)) return `expected one of ${options.map((v) => JSON.stringify(v)).join(", ")}`;
      // A union given its own message says it; otherwise what each choice found wrong, at most three ("expected string,
      // received array (or: must have at most 4 items)"), not zod's bare "Invalid input".
      const branches = (issue.errors ?? []).filter((inner) => inner.length > 0).slice(0, 3);
      if (branches.length === 0 || issue.message !== "Invalid input") return issue.message;
      const problems = (inner: z.core.$ZodIssue[]) => {
        const shown = inner.slice(0, 3).map((i) => (i.path.length > 0 ? `${formatPath(i.path)}: ` : "") + describeIssue(i));
        return inner.length > 3 ? `${shown.join(", ")} and ${inner.length - 3} more` : shown.join(", ");
      };
      const [first, ...others] = branches.map(problems);
      return others.length === 0 ? first! : `${first} (or: ${others.join("; or: ")})`;
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

/** The most problems one error answer lists; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 10;

/**
 * The problems of a request's body (or a tool call's arguments) as one short
 * line: the first MAX_LISTED_PROBLEMS, then how many more. However bad the
 * input, the answer stays small.
 */
export function problemsLine(error: z.core.$ZodError): string {
  return listProblems(describeIssues(error));
}

/** Problems joined by "; ", the first MAX_LISTED_PROBLEMS only, then how many more. */
export function listProblems(problems: readonly string[]): string {
  const shown = problems.slice(0, MAX_LISTED_PROBLEMS).join("; ");
  return problems.length > MAX_LISTED_PROBLEMS ? `${shown}; and ${problems.length - MAX_LISTED_PROBLEMS} more problems` : shown;
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

/**
 * A schema made when first used, not when its module loads: zod builds
 * every schema object at once, and the gateway's start-up pays for those
 * of routes no request may ever ask for (the OpenAI-compatible API's
 * bodies: some 2-4 ms of every start).
 */
export function madeOnFirstUse<S extends z.ZodType>(make: () => S): () => S {
  let schema: S | undefined;
  return () => (schema ??= make());
}
