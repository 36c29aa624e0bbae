import { existsSync, readFileSync } from "node:fs";
import { register } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Node module hooks for plugin modules, so that a plugin loads wherever the
 * user wrote it:
 * - `import ... from "picoclaw-ts"` (or `picoclaw-ts/runtime`...) that Node
 *   cannot resolve from the plugin's folder (a plugin outside any project
 *   that installed the package) resolves to this gateway's own package;
 * - a `.js` plugin written as an ES module inside a `"type": "commonjs"`
 *   project (npm's `npm init -y` default) is loaded as the ES module it is.
 * The hooks run on Node's loader thread, registered once, and only when
 * plugins are configured; they change nothing for any other import.
 */

/** The query that marks a plugin's own file (only those may be read as ES modules against their package's type). */
export const PLUGIN_MARK = "picoclaw-plugin";

/** The hooks, as module source (they run on the loader thread, from a data: URL, whether this code runs from src or dist). */
const HOOKS = `
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
let own = {};
export function initialize(data) { own = data.exports; }
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    const name = "picoclaw-ts";
    if (error && error.code === "ERR_MODULE_NOT_FOUND" && (specifier === name || specifier.startsWith(name + "/"))) {
      const url = own[specifier === name ? "." : "." + specifier.slice(name.length)];
      if (url) return { url, shortCircuit: true };
    }
    throw error;
  }
}
const ESM = /^\\s*(import\\s*[\\w{*"']|export\\s)/m;
export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (loaded.format !== "commonjs" || !new URL(url).searchParams.has("${PLUGIN_MARK}")) return loaded;
  const source = loaded.source == null ? await readFile(fileURLToPath(url), "utf8") : String(loaded.source);
  return ESM.test(source) ? { format: "module", source, shortCircuit: true } : loaded;
}
`;

let registered = false;

/** The entry points of the package this code belongs to, as URLs by export path (`.`, `./runtime`...). */
function ownExports(): Record<string, string> {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; exports?: Record<string, { default?: string }> };
      if (pkg.name === "picoclaw-ts") {
        return Object.fromEntries(
          Object.entries(pkg.exports ?? {}).flatMap(([key, value]) => (value.default ? [[key, pathToFileURL(path.join(dir, value.default)).href]] : [])),
        );
      }
    }
    if (path.dirname(dir) === dir) return {};
  }
}

/** Registers the hooks once for this process. */
export function registerPluginHooks(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { exports: ownExports() } });
}
