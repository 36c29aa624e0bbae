import { randomUUID } from "node:crypto";
import { open, readFile, realpath, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { Mutex } from "async-mutex";
import type { Node as JsonNode, ParseError } from "jsonc-parser";
import { ConfigError, PicoclawError, RequestError, messageOf } from "../errors.js";
import { DEFAULT_CONFIG_FILE, type LoadedConfig, readConfig } from "./load.js";

/**
 * The config file as the web tool library writes it: one key,
 * `tools.<name>.enabled`, changed in place. Every other byte of the file
 * stays as it was (jsonc-parser finds the place; see withToolSwitch). Each change reads
 * the file as it is now (the user may have edited it since start-up),
 * writes a temporary file beside it (fsync), has the loader read that copy
 * and only if it loads renames it over the file (then fsyncs the folder):
 * a reader sees the old file or the new one, never half of one, and a
 * change that would leave a config that does not load changes nothing.
 * Changes run one at a time, so none is lost to another.
 */

export interface ConfigFileOptions {
  /** The config file the gateway loaded; null when it loaded none (then the first change makes `create`). */
  file: string | null;
  /** Where the config file is made when the gateway loaded none. */
  create: string;
  /** The problems of the config file at this path as the loader reads it (none: it loads). */
  check(file: string): readonly string[];
  /** Scrubs secrets from what a refusal says (the loader's messages may quote the file). */
  redact?: (text: string) => string;
  /** Names for the temporary files (default: random). */
  ids?: () => string;
}

/** What a change did. */
export interface ConfigChange {
  /** The file written (or that already said so). */
  file: string;
  /** False when the file said so already (nothing was written). */
  written: boolean;
  /** True when there was no config file and this change made it. */
  created: boolean;
}

/** How many times a change is made again when the file changed while it was being made. */
const ATTEMPTS = 3;

export class ConfigFile {
  private readonly lock = new Mutex();
  private file: string | null;

  constructor(private readonly opts: ConfigFileOptions) {
    this.file = opts.file;
  }

  /** Sets `tools.<name>.enabled` in the file; refused (`config_not_written`, changing nothing) when the result would not load. */
  setToolEnabled(name: string, enabled: boolean): Promise<ConfigChange> {
    return this.lock.runExclusive(async () => {
      for (let attempt = 1; ; attempt++) {
        const change = await this.tryChange(name, enabled);
        if (change !== "changed meanwhile") return change;
        if (attempt === ATTEMPTS) throw refused(`${this.target}: the file kept changing while it was being written; nothing was changed, try again`);
      }
    });
  }

  private get target(): string {
    return this.file ?? this.opts.create;
  }

  private async tryChange(name: string, enabled: boolean): Promise<ConfigChange | "changed meanwhile"> {
    const target = await realTarget(this.target);
    const before = await readText(target);
    if (before === undefined && this.file !== null) {
      throw refused(`${this.file}: the config file the gateway started with is gone; nothing was written (restore it, or restart the gateway)`);
    }
    const created = before === undefined;
    const after = await withToolSwitch(before ?? "", name, enabled, target);
    if (after === before) return { file: target, written: false, created: false };
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${this.opts.ids?.() ?? randomUUID()}.tmp`);
    const mode = created ? 0o600 : (await stat(target)).mode & 0o777;
    try {
      await writeSynced(temp, after, mode);
      const problems = this.opts.check(temp).map((problem) => problem.split(temp).join(target));
      if (problems.length > 0) {
        throw refused(`the config file would not load after this change, so nothing was written: ${problems.join("; ")}`, this.opts.redact);
      }
      // The user's own edit between the read and now is never replaced: the change is made again on it.
      if ((await readText(target)) !== before) return "changed meanwhile";
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => {});
      if (error instanceof PicoclawError) throw error;
      throw new PicoclawError(`${target}: cannot write the config file (${messageOf(error)})`, { code: "storage_failed", fault: "system", cause: error });
    }
    await syncFolder(path.dirname(target));
    this.file = target;
    return { file: target, written: true, created };
  }
}

/** The config file of a loaded config (or the one to make beside it), checked with the same loader and environment. */
export function configFileOf(loaded: LoadedConfig, redact?: (text: string) => string): ConfigFile {
  return new ConfigFile({
    file: loaded.file,
    create: path.join(loaded.baseDir, DEFAULT_CONFIG_FILE),
    check: (file) => {
      try {
        readConfig({ env: loaded.env, cwd: loaded.baseDir, argv: ["--config", file] }, loaded.layout);
        return [];
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
    },
    ...(redact ? { redact } : {}),
  });
}

function refused(message: string, redact: (text: string) => string = (text) => text): RequestError {
  return new RequestError("config_not_written", redact(message));
}

/**
 * The config text with `tools.<name>.enabled` set, every other byte kept:
 * the old value's characters replaced, or the key (with the sections it
 * needs) inserted after the last entry of the deepest section there is, in
 * the file's own style: on lines of their own, indented as the entries
 * beside it, where that section spans lines; inline where it is on one.
 * `where` names the file in a refusal. Empty text is a new file.
 */
export async function withToolSwitch(text: string, name: string, enabled: boolean, where: string): Promise<string> {
  const keyPath = ["tools", name, "enabled"];
  if (text.trim() === "") return `${JSON.stringify({ tools: { [name]: { enabled } } }, null, 2)}\n`;
  // Loaded with the first change (and kept out of the bundle: it is a UMD module).
  const { findNodeAtLocation, parseTree, printParseErrorCode } = await import("jsonc-parser");
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = text.slice(bom.length);
  const errors: ParseError[] = [];
  const tree = parseTree(body, errors, { disallowComments: true, allowTrailingComma: false });
  if (errors.length > 0 || !tree || !isJson(body)) {
    const first = errors[0];
    const why = first ? `${printParseErrorCode(first.error)} at offset ${first.offset}` : "not JSON";
    throw refused(`${where}: the config file is not valid JSON now (${why}); nothing was written: fix it first`);
  }
  const existing = findNodeAtLocation(tree, keyPath);
  // The old value's own characters, and nothing else; or an insertion.
  const after = existing
    ? body.slice(0, existing.offset) + String(enabled) + body.slice(existing.offset + existing.length)
    : inserted(body, tree, keyPath, enabled, where, findNodeAtLocation);
  if (valueAt(JSON.parse(after), keyPath) !== enabled) throw refused(`${where}: the file says tools.${name} more than once; nothing was written: keep one`);
  return bom + after;
}

/** `body` with the value at `keyPath` added (it has none): one insertion, nothing else changed. */
function inserted(
  body: string,
  tree: JsonNode,
  keyPath: readonly string[],
  value: boolean,
  where: string,
  findNodeAtLocation: (root: JsonNode, path: (string | number)[]) => JsonNode | undefined,
): string {
  let parent = tree;
  let depth = 0;
  while (depth < keyPath.length - 1) {
    const next = findNodeAtLocation(tree, keyPath.slice(0, depth + 1));
    if (!next) break;
    parent = next;
    depth++;
  }
  if (parent.type !== "object")
    throw refused(`${where}: ${keyPath.slice(0, depth).join(".")} is not an object, so it cannot take "${keyPath.at(-1)}"; nothing was written`);
  let added: unknown = value;
  for (const key of keyPath.slice(depth + 1).reverse()) added = { [key]: added };
  const key = JSON.stringify(keyPath[depth]);
  const own = body.slice(parent.offset, parent.offset + parent.length);
  const last = parent.children?.at(-1);
  const at = last ? last.offset + last.length : parent.offset + 1;
  if (!own.includes("\n")) {
    // On one line: inline, spaced as the section is.
    const colon = own.includes('": ') || !own.includes('":') ? ": " : ":";
    const comma = own.includes(",") ? (/,\s/.test(own) ? ", " : ",") : colon === ":" ? "," : ", ";
    return `${body.slice(0, at)}${last ? comma : ""}${key}${colon}${inline(added, colon, comma)}${body.slice(at)}`;
  }
  const eol = body.includes("\r\n") ? "\r\n" : "\n";
  const unit = /^([ \t]+)\S/m.exec(body)?.[1] ?? "  ";
  const indentOf = (offset: number) => {
    const start = body.lastIndexOf("\n", offset - 1) + 1;
    const before = body.slice(start, offset);
    return /^[ \t]*$/.test(before) ? before : undefined;
  };
  const outer = /^[ \t]*/.exec(body.slice(body.lastIndexOf("\n", parent.offset - 1) + 1))![0];
  const indent = (last && indentOf(last.offset)) ?? outer + unit;
  const entry = `${key}: ${JSON.stringify(added, null, unit)
    .split("\n")
    .join(eol + indent)}`;
  return `${body.slice(0, at)}${last ? "," : ""}${eol}${indent}${entry}${body.slice(at)}`;
}

/** A value on one line, spaced as its neighbours are. */
function inline(value: unknown, colon: string, comma: string): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  return `{${Object.entries(value)
    .map(([key, inner]) => `${JSON.stringify(key)}${colon}${inline(inner, colon, comma)}`)
    .join(comma)}}`;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function valueAt(root: unknown, keys: readonly string[]): unknown {
  return keys.reduce<unknown>((node, key) => (node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined), root);
}

/** The file a path names (a symbolic link's target is what gets replaced, so the link stays), or the path itself when nothing is there. */
async function realTarget(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new PicoclawError(`${file}: cannot read the config file (${messageOf(error)})`, { code: "storage_failed", fault: "system", cause: error });
  }
}

async function writeSynced(file: string, text: string, mode: number): Promise<void> {
  const handle = await open(file, "wx", mode);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The rename is durable once the folder is synced (where the platform allows it). */
async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems cannot sync a folder; the rename is still atomic.
  }
}
