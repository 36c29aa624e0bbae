import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import vm from "node:vm";

/**
 * V8's code cache for the gateway's own modules: the bytecode of every
 * function a start runs, written once by the build and read at each start
 * instead of parsing and compiling the JavaScript again. A gateway compiles
 * some 1.3 MB of it before it listens; from the cache that is about a third
 * of the time.
 *
 * Node 20 has no code cache for ES modules (Node 22's
 * `module.enableCompileCache` came later), which is why dist/ is CommonJS:
 * Node loads each module as it always does (its own resolution, one copy of
 * each module for the gateway, a plugin and an embedder alike), and only the
 * compile step of a file under dist/ is ours: a `vm.Script` given the
 * cache. A file with no cache, a cache made from other source (the cache
 * carries the SHA-1 of the source it was made from: V8 itself checks only
 * the length), or one V8 refuses (another Node, other V8 flags) is compiled
 * from source as without a cache; nothing else differs. Under
 * `node --enable-source-maps` Node compiles every module itself, as it
 * reads the source maps only then; and it compiles any module with an
 * `import()` in it, as Node 20 runs no `import()` in code from a cache
 * ("A dynamic import callback was not specified"): the build makes every
 * other `import()` a `require()`.
 *
 * The build writes the cache (`useCodeCache(root, { record: true })`, then
 * `writeCodeCache`) from a gateway started the way a user starts one, once
 * it has answered `/health`, so that it holds what a start runs
 * (scripts/write-code-cache.cjs). A running gateway never writes it.
 */

/** What the cache did for the modules loaded so far. */
export interface CodeCacheStats {
  /** Modules compiled from their cache. */
  used: string[];
  /** Modules whose cache V8 refused: compiled from source. */
  rejected: string[];
  /** Modules under the folder with no cache of their source: compiled from source. */
  missing: string[];
  /**
   * Modules compiled from source without their cache being read, as V8 had
   * refused an earlier one's: it refuses a build's caches all for one
   * reason (another Node, other V8 flags), and a refused cache costs more
   * memory than no cache.
   */
  skipped: string[];
}

/** The parts of Node's CommonJS loader this hooks into (in Node since v0.x, and what Node's own compile-cache packages use). */
interface NodeModule {
  exports: unknown;
  filename: string;
  require(id: string): unknown;
  _compile(content: string, filename: string): unknown;
}
interface ModuleInternals {
  prototype: NodeModule;
  _resolveFilename(request: string, parent: NodeModule, isMain: boolean, options?: { paths?: string[] }): string;
  _resolveLookupPaths(request: string, parent: NodeModule): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

const MAGIC = Buffer.from("PCC1");
const DIGEST_BYTES = 20;
/** Where the cache of `file` (under `root`) lives: `<root>/code-cache/<its path>.bin`. */
const cacheFileOf = (root: string, file: string): string => path.join(root, "code-cache", `${path.relative(root, file)}.bin`);
const digestOf = (source: string): Buffer => createHash("sha1").update(source).digest();

interface CacheState {
  root: string;
  stats: CodeCacheStats;
  /** While recording (the build): each module's script and the digest of its source. */
  recorded?: Map<string, { script: vm.Script; digest: Buffer }>;
}

let installed: CacheState | undefined;

/**
 * Compiles every `.js` file under `root` (dist/) that Node loads from now on
 * from its cache when it has one. Once per process: a second call changes
 * nothing, but for the build's recording run (`record`, then the command's
 * own call), which forgets what it recorded before: a start uses the cache
 * only from the command's call on (dist/main.js, once V8's optimizing
 * compiler is held off), under the flags in force from there.
 */
export function useCodeCache(root: string, options: { record?: boolean } = {}): CodeCacheStats {
  if (installed) {
    installed.recorded?.clear();
    return installed.stats;
  }
  const state: CacheState = { root: path.resolve(root), stats: { used: [], rejected: [], missing: [], skipped: [] } };
  if (options.record) state.recorded = new Map();
  installed = state;
  const internals = Module as unknown as ModuleInternals;
  const original = internals.prototype._compile;
  const prefix = state.root + path.sep;
  internals.prototype._compile = function compile(this: NodeModule, content: string, filename: string): unknown {
    // With `--enable-source-maps` Node's own compile, which reads the maps: stack traces name src/ lines, as without the cache.
    // So for a module with an import() in it (the plugin loader's): in code from a cache Node 20 runs no import().
    const ours = filename.startsWith(prefix) && filename.endsWith(".js") && !filename.startsWith(path.join(state.root, "web") + path.sep);
    if (!ours || process.sourceMapsEnabled || content.includes("import(")) return original.call(this, content, filename);
    if (state.stats.rejected.length > 0) {
      state.stats.skipped.push(filename);
      return original.call(this, content, filename);
    }
    const cached = state.recorded ? undefined : readCache(state.root, filename, content);
    if (!cached && !state.recorded) {
      state.stats.missing.push(filename);
      return original.call(this, content, filename);
    }
    // The wrapper Node's loader gives a module, on a line of its own (lineOffset -1), so that positions in stack traces stay the file's.
    // A leading `#!` line becomes a comment of the same length.
    const body = content.startsWith("#!") ? `//${content.slice(2)}` : content;
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {\n${body}\n})`, {
      filename,
      lineOffset: -1,
      ...(cached ? { cachedData: cached } : {}),
    });
    if (cached) (script.cachedDataRejected ? state.stats.rejected : state.stats.used).push(filename);
    else state.recorded?.set(filename, { script, digest: digestOf(content) });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireOf(this, internals), this, filename, path.dirname(filename));
  };
  return state.stats;
}

/** What the cache did for the modules loaded so far; undefined before `useCodeCache`. */
export function codeCacheStats(): CodeCacheStats | undefined {
  return installed?.stats;
}

/**
 * Writes the cache of every module loaded since `useCodeCache(root,
 * { record: true })`, with the bytecode of every function run so far.
 * V8 keys a cache to its flags: call it before anything sets one.
 */
export function writeCodeCache(): number {
  if (!installed?.recorded) throw new Error("writeCodeCache needs useCodeCache(root, { record: true }) first");
  let written = 0;
  for (const [filename, { script, digest }] of installed.recorded) {
    const file = cacheFileOf(installed.root, filename);
    mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, Buffer.concat([MAGIC, digest, script.createCachedData()]));
    renameSync(temporary, file);
    written += 1;
  }
  return written;
}

/** The V8 data of `filename`'s cache when there is one made from `source`. */
function readCache(root: string, filename: string, source: string): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(cacheFileOf(root, filename));
  } catch {
    return undefined;
  }
  const header = MAGIC.length + DIGEST_BYTES;
  if (data.length <= header || !data.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!data.subarray(MAGIC.length, header).equals(digestOf(source))) return undefined;
  return data.subarray(header);
}

/** The `require` Node's loader gives a module's code. */
function requireOf(module: NodeModule, internals: ModuleInternals): NodeJS.Require {
  const resolve = Object.assign((request: string, options?: { paths?: string[] }) => internals._resolveFilename(request, module, false, options), {
    paths: (request: string) => internals._resolveLookupPaths(request, module),
  });
  return Object.assign((id: string) => module.require(id), {
    resolve,
    main: process.mainModule,
    extensions: internals._extensions,
    cache: internals._cache,
  }) as unknown as NodeJS.Require;
}
