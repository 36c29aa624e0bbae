import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options } from "ajv";
import { messageOf } from "../errors.js";
import { type PathPart, formatPath } from "../validation.js";

/**
 * A tool's arguments given as JSON Schema (an MCP tool's `inputSchema`, a
 * plugin's plain `parameters`), checked before the model ever sees it: it
 * must be an object schema that ajv can compile. The compiled validator then
 * checks the model's arguments before the tool runs.
 */
export type CheckedSchema =
  | {
      ok: true;
      /** What the model is shown (the schema without `$schema`). */
      schema: Record<string, unknown>;
      /** Problems with `args`, one short line each; empty when they fit. */
      validate(args: unknown): string[];
    }
  | { ok: false; problem: string };

type Dialect = "2020-12" | "2019-09" | "draft-07";

// Unknown keywords and formats are tolerated (servers add their own annotations);
// a schema that breaks its dialect's meta-schema, or cannot be compiled, is not.
const OPTIONS: Options = { strict: false, allErrors: true, validateFormats: false, logger: false };
const instances = new Map<Dialect, Ajv>();

// ajv is loaded with the first JSON Schema to check (a plugin's or an MCP server's tool): a gateway without one never loads it.
const load = createRequire(import.meta.url);

function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    if (dialect === "2020-12") ajv = new (load("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js")).Ajv2020(OPTIONS);
    else if (dialect === "2019-09") ajv = new (load("ajv/dist/2019.js") as typeof import("ajv/dist/2019.js")).Ajv2019(OPTIONS);
    else ajv = new (load("ajv") as typeof import("ajv")).Ajv(OPTIONS);
    instances.set(dialect, ajv);
  }
  return ajv;
}

/** The dialect a `$schema` names; draft-06 is validated as draft-07 (its superset). */
function dialectOf(uri: string): Dialect | undefined {
  const bare = uri.replace(/^https?:\/\//, "").replace(/#$/, "");
  if (bare === "json-schema.org/draft/2020-12/schema") return "2020-12";
  if (bare === "json-schema.org/draft/2019-09/schema") return "2019-09";
  if (bare === "json-schema.org/draft-07/schema" || bare === "json-schema.org/draft-06/schema") return "draft-07";
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** Checks a tool's arguments schema; `what` names it in problems (an MCP tool's `inputSchema`, a plugin's `parameters`). */
export function checkInputSchema(raw: unknown, what = "inputSchema"): CheckedSchema {
  if (!isRecord(raw)) return { ok: false, problem: `its ${what} is not a JSON object` };
  if (raw.type !== "object") return { ok: false, problem: `its ${what} does not have type "object" at the top` };
  const { $schema, ...schema } = raw;
  let dialects: Dialect[];
  if ($schema === undefined) {
    // MCP's default dialect is 2020-12; older servers meant draft-07 without saying so.
    dialects = ["2020-12", "draft-07"];
  } else {
    const dialect = typeof $schema === "string" ? dialectOf($schema) : undefined;
    if (!dialect) return { ok: false, problem: `its ${what} uses an unsupported $schema ${JSON.stringify($schema)}` };
    dialects = [dialect];
  }
  let first: unknown;
  for (const dialect of dialects) {
    const ajv = ajvFor(dialect);
    try {
      const compiled = ajv.compile(schema);
      return {
        ok: true,
        schema,
        validate: (args) => (compiled(args) ? [] : describeErrors(compiled.errors ?? [])),
      };
    } catch (error) {
      first ??= error;
    } finally {
      // The compiled function stands alone; forgetting the schema keeps the
      // instance small and lets another tool reuse the same $id.
      ajv.removeSchema(schema);
    }
  }
  return { ok: false, problem: `its ${what} is not a valid JSON Schema: ${shorten(messageOf(first))}` };
}

function shorten(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A JSON pointer (`/items/0/id`) as path parts (`["items", 0, "id"]`). */
function partsOf(pointer: string): PathPart[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((p) => (/^(0|[1-9]\d*)$/.test(p) ? Number(p) : p));
}

const MAX_PROBLEMS = 5;

/** Ajv's errors as short lines named by argument path (`items[0].id: must be string`). */
export function describeErrors(errors: readonly ErrorObject[]): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const parts = partsOf(error.instancePath);
    const path = formatPath(parts);
    const params = error.params as Record<string, unknown>;
    let line: string;
    if (error.keyword === "required") {
      line = `${formatPath([...parts, String(params.missingProperty)])}: required`;
    } else if (error.keyword === "additionalProperties") {
      line = `${path ? `${path}: ` : ""}unknown key "${String(params.additionalProperty)}"`;
    } else {
      line = `${path ? `${path}: ` : ""}${error.message ?? error.keyword}`;
    }
    if (!lines.includes(line)) lines.push(line);
    if (lines.length === MAX_PROBLEMS) break;
  }
  return lines;
}
