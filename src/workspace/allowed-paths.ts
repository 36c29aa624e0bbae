import path from "node:path";

/**
 * `tools.allow_read_paths` / `tools.allow_write_paths`, as PicoClaw reads
 * them: regular expressions matched against a cleaned absolute path. A
 * pattern of the form `^<literal path>` (optionally ending `(?:/|$)`) is
 * also a folder: every path inside it matches. A path must match both as
 * asked for and as its symlinks resolve (the caller checks both).
 */
export class AllowedPaths {
  private readonly roots: string[] = [];

  constructor(private readonly patterns: readonly RegExp[]) {
    for (const pattern of patterns) {
      const root = literalRoot(pattern.source);
      if (root) this.roots.push(root);
    }
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  matches(absolute: string): boolean {
    const cleaned = path.resolve(absolute);
    return this.patterns.some((pattern) => pattern.test(cleaned)) || this.roots.some((root) => within(cleaned, root));
  }
}

/** Whether `candidate` is `folder` or inside it (both absolute and clean). */
export function within(candidate: string, folder: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The folder a `^<literal>` pattern names, or undefined for any other pattern. */
function literalRoot(source: string): string | undefined {
  if (!source.startsWith("^")) return undefined;
  let literal = source.slice(1);
  for (const suffix of ["(?:/|$)", "(?:\\\\|$)"]) if (literal.endsWith(suffix)) literal = literal.slice(0, -suffix.length);
  let out = "";
  for (let i = 0; i < literal.length; i++) {
    const char = literal[i]!;
    if (char === "\\") {
      const next = literal[i + 1];
      if (next === undefined) return undefined;
      out += next;
      i++;
    } else if (".+*?()[]{}|$^".includes(char)) return undefined;
    else out += char;
  }
  return out !== "" && path.isAbsolute(out) ? path.resolve(out) : undefined;
}

/** The patterns of a config list, compiled; a bad one is named (the config's check refuses it before this). */
export function compilePatterns(sources: readonly string[]): RegExp[] {
  return sources.map((source) => new RegExp(source));
}
