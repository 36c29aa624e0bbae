import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { within } from "../../workspace/allowed-paths.js";
import { blocked } from "./command-guard.js";
import type { CommandLine, ShellWord } from "./command-line.js";

/**
 * With restrict_to_workspace, the paths a command line names must stay in
 * the workspace (PicoClaw's rule, judged on the shell's words rather than
 * the raw text): no `../` anywhere; every word that is a path (absolute,
 * with a `/`, `~`, `..`, or an existing symlink; the value of `--opt=` and
 * `if=`) must resolve, symlinks followed, inside the workspace, or in
 * tools.allow_read_paths, or be one of the harmless devices. URLs
 * (`https://…`, `host.tld/path`) are not paths. A path built from a
 * variable (`$X/…`) cannot be judged and is refused, but `$HOME` and `$PWD`
 * (both in the workspace). Like the deny patterns this is a tripwire: a
 * command can still `cd` and compute paths; `sandbox: "bwrap"` is the
 * confinement.
 */

export interface PathRules {
  /** The workspace, symlinks resolved. */
  root: string;
  /** Where the command starts, symlinks resolved (inside root). */
  cwd: string;
  /** tools.allow_read_paths. */
  listed(absolute: string): boolean;
}

const TRAVERSAL = /\.\.(?:[\\/]\.\.)*[\\/]/;
const SAFE = new Set(["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"]);
const URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const REMOTE = /^[\w.-]+@[\w.-]+:/;
const DOMAIN = /^([a-z0-9-]+(?:\.[a-z0-9-]+)+)\//i;
const KEY_VALUE = /^[A-Za-z_][\w.-]*=/;
const WORKSPACE_VARIABLES = /^\$(?:\{(HOME|PWD)\}|(HOME|PWD)(?![\w]))/;

export async function pathRefusal(command: string, line: CommandLine, rules: PathRules): Promise<string | undefined> {
  if (TRAVERSAL.test(command)) return blocked("path traversal detected");
  for (const c of line.commands) {
    for (const word of [...(c.program ? [c.program] : []), ...c.args, ...c.others]) {
      const refusal = await wordRefusal(word, rules);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

async function wordRefusal(word: ShellWord, rules: PathRules): Promise<string | undefined> {
  let value = word.value;
  if (word.expanded) {
    const variable = WORKSPACE_VARIABLES.exec(value);
    if (variable) value = (variable[1] ?? variable[2]) === "HOME" ? rules.root + value.slice(variable[0].length) : rules.cwd + value.slice(variable[0].length);
    else if (/^[^/]*\//.test(value)) return blocked(`a path built from an expansion cannot be checked: ${JSON.stringify(value)}; write the path out`);
    else return undefined;
  }
  for (const candidate of candidates(value)) {
    const refusal = await candidateRefusal(candidate, rules);
    if (refusal) return refusal;
  }
  return undefined;
}

/** The parts of a word that may be paths: the word, the value of `--opt=value` / `if=value`, the path glued to a flag (`-I/usr/include`). */
function candidates(value: string): string[] {
  if (value.startsWith("-")) {
    const eq = value.indexOf("=");
    if (eq >= 0) return [value.slice(eq + 1)];
    const slash = value.indexOf("/");
    return slash >= 0 ? [value.slice(slash)] : [];
  }
  if (KEY_VALUE.test(value)) return [value.slice(value.indexOf("=") + 1)];
  return [value];
}

async function candidateRefusal(candidate: string, rules: PathRules): Promise<string | undefined> {
  let text = candidate;
  if (text === "" || REMOTE.test(text)) return undefined;
  if (URL.test(text)) {
    if (!text.toLowerCase().startsWith("file://")) return undefined;
    text = text.slice("file://".length);
  }
  if (text.startsWith("~")) {
    if (text !== "~" && !text.startsWith("~/")) return outside(candidate, rules);
    text = rules.root + text.slice(1);
  }
  const domain = DOMAIN.exec(text);
  if (domain && !(await exists(path.join(rules.cwd, domain[1]!)))) return undefined;
  const pathLike = text.includes("/") || text === "." || text === "..";
  if (!pathLike && !(await isSymlink(path.join(rules.cwd, text)))) return undefined;
  const absolute = path.resolve(rules.cwd, text);
  if (SAFE.has(absolute) || /^\/dev\/fd\/\d+$/.test(absolute)) return undefined;
  const real = await resolved(absolute);
  if (within(real, rules.root) || rules.listed(real) || SAFE.has(real)) return undefined;
  return outside(candidate, rules);
}

const outside = (candidate: string, rules: PathRules) =>
  blocked(`path outside working dir: ${JSON.stringify(candidate)} is outside the workspace (${rules.root}) and not in tools.allow_read_paths`);

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function isSymlink(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Where a path leads, symlinks resolved as far as it exists (the rest appended). */
async function resolved(absolute: string): Promise<string> {
  let existing = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realpath(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return absolute;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}
