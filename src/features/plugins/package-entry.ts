import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Where `import("name")` would go if it were written in a file of `baseDir`:
 * the package found in the nearest `node_modules`, its entry chosen as
 * Node's ES module loader chooses it (`exports` with the `import`, `node`
 * and `default` conditions, else `main`, else `index.js`). Null when no
 * such package is installed there.
 */

const CONDITIONS = new Set(["import", "node", "default"]);

type Exports = string | null | Exports[] | { [key: string]: Exports };

function splitSpecifier(spec: string): { name: string; subpath: string } {
  const parts = spec.split("/");
  const count = spec.startsWith("@") ? 2 : 1;
  const name = parts.slice(0, count).join("/");
  const rest = parts.slice(count).join("/");
  return { name, subpath: rest ? `./${rest}` : "." };
}

function conditional(target: Exports): string | null {
  if (typeof target === "string") return target;
  if (Array.isArray(target)) {
    for (const item of target) {
      const found = conditional(item);
      if (found) return found;
    }
    return null;
  }
  if (target && typeof target === "object") {
    for (const [key, value] of Object.entries(target))
      if (CONDITIONS.has(key)) {
        const found = conditional(value);
        if (found) return found;
      }
  }
  return null;
}

function entryOf(pkg: { exports?: Exports; main?: string }, subpath: string): string | null {
  const { exports } = pkg;
  if (exports !== undefined && exports !== null) {
    const keyed = typeof exports === "object" && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith("."));
    if (keyed) return conditional((exports as Record<string, Exports>)[subpath] ?? null);
    return subpath === "." ? conditional(exports) : null;
  }
  if (subpath !== ".") return subpath;
  return pkg.main ?? "index.js";
}

export function resolvePackageEntry(spec: string, baseDir: string): string | null {
  const { name, subpath } = splitSpecifier(spec);
  for (let dir = path.resolve(baseDir); ; dir = path.dirname(dir)) {
    const pkgDir = path.join(dir, "node_modules", name);
    const manifest = path.join(pkgDir, "package.json");
    if (existsSync(manifest)) {
      const entry = entryOf(JSON.parse(readFileSync(manifest, "utf8")) as { exports?: Exports; main?: string }, subpath);
      return entry === null ? null : path.resolve(pkgDir, entry);
    }
    if (path.dirname(dir) === dir) return null;
  }
}
