import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { ConfigError, messageOf } from "../../errors.js";
import type { AnyTool } from "../../tools/registry.js";
import { PLUGIN_MARK, registerPluginHooks } from "./module-hooks.js";
import { resolvePackageEntry } from "./package-entry.js";
import { withJsonSchema } from "../../tools/json-schema-tool.js";
import { TOOL_NAME, isZod } from "../../tools/tool.js";

/**
 * Tool modules listed in `tools.plugins`: paths (relative to the config
 * file) or package names. Each exports one tool or a list of tools (as its
 * default export, or as `tools` / `tool`). Everything is checked before the
 * gateway starts; any problem stops start-up with a message naming the
 * module and the problem.
 */

export interface LoadedPlugin {
  /** The spec as written in the config. */
  spec: string;
  tools: AnyTool[];
}

/**
 * Where a module spec points: paths resolve against the config file's
 * folder; package names as an ES module import written there would (the
 * nearest node_modules). A package not installed there falls back to the
 * gateway's own resolution (packages installed next to the gateway).
 */
export function resolvePlugin(spec: string, baseDir: string): string {
  if (spec.startsWith(".") || path.isAbsolute(spec)) {
    const url = pathToFileURL(path.resolve(baseDir, spec));
    url.searchParams.set(PLUGIN_MARK, "");
    return url.href;
  }
  const entry = resolvePackageEntry(spec, baseDir);
  return entry ? pathToFileURL(entry).href : spec;
}

function exportedTools(loaded: Record<string, unknown>): unknown[] | null {
  // A CommonJS module compiled from ES modules hands its exports over as `default`, marked __esModule.
  const inner = loaded.default as Record<string, unknown> | undefined;
  const module = inner && typeof inner === "object" && inner.__esModule === true ? inner : loaded;
  for (const key of ["default", "tools", "tool"]) {
    const value = module[key];
    if (value !== undefined && value !== null) return Array.isArray(value) ? value : [value];
  }
  return null;
}

/** Why a value is not a usable tool, or null (`reserved`: keys of `tools` that are no tool's section). */
export function toolProblem(value: unknown, reserved: readonly string[]): string | null {
  if (value === null || typeof value !== "object") return "is not an object (use defineTool({...}))";
  const tool = value as Partial<AnyTool>;
  if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) return `has no valid name (expected ${TOOL_NAME})`;
  if (reserved.includes(tool.name)) return `is named "${tool.name}", which is reserved`;
  if (typeof tool.description !== "string" || tool.description.trim() === "") return `"${tool.name}" has no description`;
  if (typeof tool.execute !== "function") return `"${tool.name}" has no execute function`;
  if (!isZod(tool.parameters)) {
    // A plain JSON Schema object is checked when the tool is made (asTool).
    const plain = tool.parameters as unknown;
    if (plain === null || typeof plain !== "object" || Array.isArray(plain) || typeof (plain as { safeParse?: unknown }).safeParse === "function") {
      return `"${tool.name}" parameters must be a zod 4 schema (import { z } from "picoclaw-ts") or a JSON Schema object`;
    }
  } else {
    let schema: Record<string, unknown>;
    try {
      schema = z.toJSONSchema(tool.parameters as z.ZodType, { io: "input" }) as Record<string, unknown>;
    } catch (error) {
      return `"${tool.name}" parameters cannot be shown to a model as JSON Schema: ${messageOf(error)}`;
    }
    if (schema.type !== "object") return `"${tool.name}" parameters must be an object schema (z.object({...})), not ${JSON.stringify(schema.type ?? "any")}`;
  }
  if (tool.timeoutMs !== undefined && (!Number.isInteger(tool.timeoutMs) || tool.timeoutMs < 0)) return `"${tool.name}" timeoutMs must be a whole number of ms`;
  return null;
}

/** The tool as the tool set runs it: a JSON-Schema tool gets its checker; a zod one is itself. */
function asTool(tool: AnyTool): AnyTool | string {
  return isZod(tool.parameters) ? tool : withJsonSchema(tool);
}

/**
 * Imports and checks every plugin. `taken` holds the names already in use
 * (built-in tools); a clash names both owners; `reserved` the keys of
 * `tools` that are no tool's section (no tool may be named so). Plugin tools are on unless
 * they say `enabledByDefault: false` (or the config turns them off).
 */
export async function loadPlugins(
  specs: readonly string[],
  baseDir: string,
  taken: ReadonlyMap<string, string>,
  reserved: readonly string[],
): Promise<LoadedPlugin[]> {
  const owners = new Map(taken);
  const problems: string[] = [];
  const loaded: LoadedPlugin[] = [];
  if (specs.length > 0) registerPluginHooks();
  for (const [index, spec] of specs.entries()) {
    const where = `tools.plugins[${index}] (${JSON.stringify(spec)})`;
    let module: Record<string, unknown>;
    const target = resolvePlugin(spec, baseDir);
    try {
      module = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      const missing = target === spec && (error as { code?: string }).code === "ERR_MODULE_NOT_FOUND";
      problems.push(
        missing
          ? `${where}: package "${spec}" is not installed in ${baseDir} or a folder above it (npm install ${spec} there)`
          : `${where}: cannot load the module: ${messageOf(error).split("\n")[0]}`,
      );
      continue;
    }
    const exported = exportedTools(module);
    if (!exported || exported.length === 0) {
      problems.push(`${where}: exports no tool (export default defineTool({...}), or a list of tools)`);
      continue;
    }
    const tools: AnyTool[] = [];
    for (const value of exported) {
      const problem = toolProblem(value, reserved);
      if (problem) {
        problems.push(`${where}: a tool ${problem}`);
        continue;
      }
      const tool = asTool(value as AnyTool);
      if (typeof tool === "string") {
        problems.push(`${where}: a tool "${(value as AnyTool).name}": ${tool}`);
        continue;
      }
      const owner = owners.get(tool.name);
      if (owner) {
        problems.push(`${where}: tool "${tool.name}" clashes with the tool of the same name from ${owner}`);
        continue;
      }
      owners.set(tool.name, where);
      // On when listed, unless the tool says otherwise (the prototype keeps class-based tools whole).
      tools.push(tool.enabledByDefault === undefined ? Object.create(tool, { enabledByDefault: { value: true } }) : tool);
    }
    loaded.push({ spec, tools });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return loaded;
}
