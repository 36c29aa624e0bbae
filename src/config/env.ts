import { formatPath } from "../validation.js";
import type { EnvVariable } from "./env-variables.js";

/**
 * The environment overrides (README, "Environment overrides"), applied to the raw config after
 * the file and before validation. Each bad value is reported naming the
 * variable; a variable that is not set changes nothing.
 */

type Parse = (raw: string) => { value: unknown } | { problem: string };

const parseBoolean: Parse = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === "true" || v === "1") return { value: true };
  if (v === "false" || v === "0") return { value: false };
  return { problem: `expected true, false, 1 or 0, got ${JSON.stringify(raw)}` };
};

const parseInteger =
  (min: number, max: number): Parse =>
  (raw) => {
    const v = raw.trim();
    if (!/^-?\d+$/.test(v)) return { problem: `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}` };
    const n = Number(v);
    if (n < min || n > max) return { problem: `expected an integer from ${min} to ${max}, got ${v}` };
    return { value: n };
  };

const parseText: Parse = (raw) => (raw.trim() ? { value: raw.trim() } : { problem: "must not be empty" });

interface Override {
  variable: string;
  path: string[];
  parse: Parse;
  /** Its value is a secret (masked by config check, scrubbed from tool output and the log). */
  secret?: true;
}

const FIXED: Override[] = [
  { variable: "PICOCLAW_GATEWAY_HOST", path: ["gateway", "host"], parse: parseText },
  { variable: "PICOCLAW_GATEWAY_PORT", path: ["gateway", "port"], parse: parseInteger(0, 65535) },
  { variable: "PICOCLAW_GATEWAY_TOKEN", path: ["gateway", "token"], parse: (raw) => ({ value: raw }), secret: true },
  { variable: "PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME", path: ["agents", "defaults", "model_name"], parse: parseText },
  {
    variable: "PICOCLAW_AGENTS_DEFAULTS_MAX_TOOL_ITERATIONS",
    path: ["agents", "defaults", "max_tool_iterations"],
    parse: parseInteger(1, 1000),
  },
];

const TOOL_ENABLED = /^PICOCLAW_TOOLS_([A-Z0-9_]+)_ENABLED$/;

/** Values PICOCLAW_LOG_LEVEL may take (pino's levels). */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * A tool name as its variable spells it, lowercased: environment variable
 * names hold letters, digits and `_` only, so any other character (the `-`
 * of `my-tool`, of `mcp_my-fs_read`) is written `_`.
 */
export function toolVariableName(tool: string): string {
  return tool.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** `PICOCLAW_TOOLS_<NAME>_ENABLED` for a tool that is not built in: applied once plugins and MCP tools are known. */
export interface ToolSwitch {
  variable: string;
  /** The tool name as the variable spells it, lowercased (see toolVariableName). */
  tool: string;
  enabled: boolean;
}

/** Where the config's tool switches came from (the web tool library shows it, and refuses to change what a variable sets). */
export interface ToolSwitchSources {
  /** Tool names whose `tools.<name>.enabled` the config file writes. */
  readonly inFile: ReadonlySet<string>;
  /** Built-in tool name → the `PICOCLAW_TOOLS_<NAME>_ENABLED` variable that set its `enabled` (other tools' are ToolSwitches). */
  readonly fromEnv: ReadonlyMap<string, string>;
}

export interface OverrideOutcome {
  problems: string[];
  warnings: string[];
  /** JSON path (as formatted) → the variable that set it, for error messages. */
  setBy: Map<string, string>;
  /** Switches for tools that are not built in. */
  toolSwitches: ToolSwitch[];
  /** Values set that are secrets. */
  secrets: string[];
}

/** The keys of `tools` the layout knows: the registered features' tool sections, and the ones that are no tool's; and the `PICOCLAW_<PATH>` variables of its keys. */
export interface ToolKeys {
  readonly toolKeys: readonly string[];
  readonly reservedToolKeys: readonly string[];
  /** Every key's variable (env-variables.ts); asked only when the environment has a PICOCLAW_ variable none of the fixed ones is. */
  envVariables?(): ReadonlyMap<string, EnvVariable>;
}

/** Variables read elsewhere (or above): never one of the config's keys. */
const ELSEWHERE = new Set(["PICOCLAW_CONFIG", "PICOCLAW_HOME", "PICOCLAW_LOG_LEVEL", "PICOCLAW_BUILTIN_SKILLS"]);

const parseNumber =
  (min: number, max: number): Parse =>
  (raw) => {
    const v = Number(raw.trim());
    if (raw.trim() === "" || !Number.isFinite(v)) return { problem: `expected a number, got ${JSON.stringify(raw)}` };
    if (v < min || v > max) return { problem: `expected a number from ${min} to ${max}, got ${raw.trim()}` };
    return { value: v };
  };

const parseList: Parse = (raw) => ({
  value: raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== ""),
});

function parserOf(variable: EnvVariable): Parse {
  const min = variable.minimum ?? Number.MIN_SAFE_INTEGER;
  const max = variable.maximum ?? Number.MAX_SAFE_INTEGER;
  switch (variable.kind) {
    case "boolean":
      return parseBoolean;
    case "integer":
      return parseInteger(min, max);
    case "number":
      return parseNumber(min, max);
    case "list":
      return parseList;
    case "string":
      return (raw) => ({ value: raw.trim() });
  }
}

/** Applies every override present in `env` to `raw` (a plain JSON object, mutated). */
export function applyEnvOverrides(raw: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>, keys: ToolKeys): OverrideOutcome {
  const outcome: OverrideOutcome = { problems: [], warnings: [], setBy: new Map(), toolSwitches: [], secrets: [] };
  const overrides = [...FIXED];
  const fixed = new Set(FIXED.map((o) => o.variable));
  let table: ReadonlyMap<string, EnvVariable> | undefined;
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith("PICOCLAW_") || fixed.has(variable) || ELSEWHERE.has(variable)) continue;
    const match = TOOL_ENABLED.exec(variable);
    const tool = match?.[1]?.toLowerCase();
    // A tool's switch (the common case) is known without the table.
    if (tool !== undefined && keys.toolKeys.includes(tool)) {
      overrides.push({ variable, path: ["tools", tool, "enabled"], parse: parseBoolean });
      continue;
    }
    // Then every key's own variable (PICOCLAW_TOOLS_EXEC_TIMEOUT_SECONDS, PICOCLAW_TOOLS_WEB_BRAVE_ENABLED).
    table ??= keys.envVariables?.() ?? new Map();
    const known = table.get(variable);
    if (known) {
      overrides.push({ variable, path: known.path, parse: parserOf(known), ...(known.secret ? { secret: true as const } : {}) });
      continue;
    }
    if (tool === undefined) {
      if (variable.startsWith("PICOCLAW_TOOLS_") && variable.endsWith("_ENABLED")) {
        outcome.warnings.push(`${variable}: a variable name holds only letters, digits and _; write every other character of the tool name as _; ignored`);
      }
      continue;
    }
    if (keys.reservedToolKeys.includes(tool)) {
      outcome.problems.push(`${variable}: tools.${tool} is not a tool`);
      continue;
    }
    const parsed = parseBoolean(env[variable]!);
    if ("problem" in parsed) outcome.problems.push(`${variable}: ${parsed.problem}`);
    else outcome.toolSwitches.push({ variable, tool, enabled: parsed.value as boolean });
  }
  const level = env.PICOCLAW_LOG_LEVEL;
  if (level !== undefined && !LOG_LEVELS.includes(level.trim().toLowerCase())) {
    outcome.problems.push(`PICOCLAW_LOG_LEVEL: expected one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
  }
  for (const { variable, path, parse, secret } of overrides) {
    const rawValue = env[variable];
    if (rawValue === undefined) continue;
    const parsed = parse(rawValue);
    if ("problem" in parsed) {
      outcome.problems.push(`${variable}: ${parsed.problem}`);
      continue;
    }
    if (secret) for (const value of [parsed.value].flat()) if (typeof value === "string") outcome.secrets.push(value);
    if (setAt(raw, path, parsed.value)) outcome.setBy.set(formatPath(path), variable);
  }
  return outcome;
}

/** Sets a nested value, creating plain objects on the way; false when the file has a non-object there. */
function setAt(root: Record<string, unknown>, path: string[], value: unknown): boolean {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === undefined) node[key] = {};
    else if (next === null || typeof next !== "object" || Array.isArray(next)) return false;
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
  return true;
}
