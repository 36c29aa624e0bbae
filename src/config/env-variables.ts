import { SECRET_NAME } from "./secrets.js";

/**
 * The `PICOCLAW_<PATH>` variables, PicoClaw's way: every key of the config
 * that holds a boolean, a number, a string or a list of strings can be set
 * from the environment, its variable the key's path in capitals with `_`
 * between the parts (`tools.exec.timeout_seconds`:
 * `PICOCLAW_TOOLS_EXEC_TIMEOUT_SECONDS`; `agents.defaults.restrict_to_workspace`:
 * `PICOCLAW_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE`). A list is written
 * comma-separated. Read from the JSON Schema of the composed config, so a
 * feature's keys have their variables as soon as it is registered. Lists of
 * entries (`model_list`, `channel_list`) and maps (`tools.mcp.servers`)
 * have none.
 */

export type EnvKind = "boolean" | "integer" | "number" | "string" | "list";

export interface EnvVariable {
  variable: string;
  path: string[];
  kind: EnvKind;
  minimum?: number;
  maximum?: number;
  /** Its value is a secret (a key named like one): masked by config check, scrubbed from logs. */
  secret: boolean;
}

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
};

/** Top-level keys without variables: lists of entries, and the editor's `$schema`. */
const WITHOUT = new Set(["$schema", "model_list", "channel_list"]);

export function envVariablesOf(schema: JsonSchema): Map<string, EnvVariable> {
  const found = new Map<string, EnvVariable>();
  const clashes = new Set<string>();
  const visit = (node: JsonSchema, path: string[]) => {
    const kind = kindOf(node);
    if (kind === "object") {
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        if (path.length === 0 && WITHOUT.has(key)) continue;
        visit(child, [...path, key]);
      }
      return;
    }
    if (kind === undefined || path.length === 0) return;
    const variable = `PICOCLAW_${path
      .join("_")
      .toUpperCase()
      .replace(/[^A-Z0-9_]/g, "_")}`;
    // Two paths written the same way (a_b.c and a.b_c) get no variable: which one it sets could not be told.
    if (found.has(variable)) clashes.add(variable);
    const bounds = kind === "integer" || kind === "number" ? plain(node) : undefined;
    found.set(variable, {
      variable,
      path,
      kind,
      ...(bounds?.minimum === undefined ? {} : { minimum: bounds.minimum }),
      ...(bounds?.maximum === undefined ? {} : { maximum: bounds.maximum }),
      secret: SECRET_NAME.test(path.at(-1)!),
    });
  };
  visit(schema, []);
  for (const variable of clashes) found.delete(variable);
  return found;
}

/** The schema without its `null` alternative (PicoClaw writes null for an empty list). */
function plain(node: JsonSchema): JsonSchema {
  if (!node.anyOf) return node;
  const others = node.anyOf.filter((branch) => branch.type !== "null");
  return others.length === 1 ? plain(others[0]!) : node;
}

function kindOf(raw: JsonSchema): EnvKind | "object" | undefined {
  const node = plain(raw);
  switch (node.type) {
    case "object":
      return node.properties ? "object" : undefined;
    case "boolean":
    case "integer":
    case "number":
    case "string":
      return node.type;
    case "array":
      return node.items && plain(node.items).type === "string" ? "list" : undefined;
    default:
      return undefined;
  }
}
