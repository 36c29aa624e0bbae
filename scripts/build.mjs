// `npm run build`: dist/ from src/ (and the chat page from web/).
//
// The JavaScript is bundled by esbuild, not emitted file by file: a gateway
// that loads a few large modules starts much faster than one that resolves,
// reads and compiles some 250 small ones (zod alone is 95 files). Every
// entry point (the `picoclaw` command and each of package.json's exports)
// is built in one run with code splitting, so they share their chunks: a
// plugin's `import { z, defineTool } from "picoclaw-ts"` gets the very zod
// and classes the gateway runs with. What only some configs use (the MCP
// client, the plugin loader, Telegram, Discord, the answer readers, the REPL) stays
// behind `import()` and is a chunk of its own, named after its source
// (dist/features/mcp/index.js, ...), loaded on first use; undici (the web
// tools' HTTP client) is a chunk of its own too, loaded with their first call.
// The packages only such optional code needs (the MCP SDK, ajv, grammY,
// @discordjs, pg) stay in node_modules. Each module is then turned into
// CommonJS, and a gateway started once writes V8's code cache for what a
// start loads (dist/code-cache/; see below). Type declarations come from tsc; `--no-types`
// leaves them as they are (npm start rebuilds with it: running needs only
// the JavaScript, in under a second, while tsc takes several). The last
// step records a digest of what the build was made from
// (scripts/build-inputs.mjs), which tells npm start the build is current.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { STAMP, buildInputs, digestOf, stampText } from "./build-inputs.mjs";
import { HONO_MODULE, isHonoModule, withFetchClasses } from "./fetch-classes.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const src = path.join(root, "src");

/**
 * Loaded from node_modules on first use, never bundled: what only some
 * configs use (and jsonc-parser, a UMD module esbuild cannot follow, loaded
 * by the tool library's first switch).
 */
const UNBUNDLED = [
  "@modelcontextprotocol/sdk",
  "ajv",
  "grammy",
  "@discordjs/core",
  "@discordjs/rest",
  "@discordjs/ws",
  "jsonc-parser",
  "pg",
  "@opentelemetry/*",
];

/** src/<name>.ts for dist/main.js and each `dist/<name>.js` that package.json exports. */
function packageEntries() {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const targets = new Set(["./dist/main.js"]);
  for (const value of Object.values(pkg.exports ?? {})) {
    const target = typeof value === "string" ? value : value?.default;
    if (typeof target === "string") targets.add(target);
  }
  return [...targets].map((target) => path.join(src, `${path.basename(target, ".js")}.ts`)).filter((file) => existsSync(file));
}

/**
 * Every source file some other one loads with `import("./...")`: each is an
 * entry point too, so its chunk keeps its source's path and name in dist/
 * (a reader of a stack trace, or of what a process loaded, can tell them).
 */
function lazyEntries(dir = src, found = new Set()) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) lazyEntries(file, found);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
      for (const [, specifier] of readFileSync(file, "utf8").matchAll(/\bimport\(\s*"(\.{1,2}\/[^"]+)\.js"\s*\)/g)) {
        const target = path.resolve(dir, `${specifier}.ts`);
        if (existsSync(target)) found.add(target);
      }
    }
  }
  return found;
}

/** The JavaScript files under `dir`. */
function scriptsUnder(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) scriptsUnder(file, found);
    else if (entry.name.endsWith(".js")) found.push(file);
  }
  return found;
}

/**
 * dist/code-cache/ from a gateway started as a user starts one
 * (scripts/write-code-cache.cjs, in a folder of its own). Without it the
 * gateway works as well and starts slower, so a failure here is a warning.
 * `later` (npm start's build, `--code-cache-later`): the gateway that
 * follows starts at once, and the cache is written beside it by a process
 * of lower priority, for the starts after; a failure there is silent.
 */
function writeCodeCache(later) {
  const env = { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_LOG_LEVEL: "warn" };
  for (const name of Object.keys(env)) if (name.startsWith("PICOCLAW_") && name !== "PICOCLAW_CONFIG" && name !== "PICOCLAW_LOG_LEVEL") delete env[name];
  const writer = [path.join(root, "scripts", "write-code-cache.cjs"), "gateway"];
  if (later) {
    const child = spawn(process.execPath, writer, { env, stdio: "ignore", detached: true });
    child.on("error", () => {});
    if (child.pid !== undefined)
      try {
        setPriority(child.pid, 19);
      } catch {
        // Left at the build's priority.
      }
    child.unref();
    return;
  }
  const run = spawnSync(process.execPath, writer, { env, encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0)
    process.stderr.write(`build: no code cache (the gateway starts without it, slower): ${(run.stderr || run.error?.message || "").trim()}\n`);
}

/** The JavaScript (and its maps) of the last build, which the next one replaces. */
function removeScripts(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) removeScripts(file);
    else if (/\.js(\.map)?$/.test(entry.name)) rmSync(file);
  }
}

/**
 * zod's `z.locales` namespace holds some 60 languages' error messages, 300
 * KB of the 1.5 MB the gateway compiles at start (a fifth), of which it
 * uses one: English, zod's default. This plugin bundles English alone and
 * makes every other language a function of the same name that loads zod's
 * own CommonJS copy of the messages on its first call, so
 * `z.config(z.locales.fr())` in a plugin works as zod documents it.
 */
const zodLocalesOnDemand = {
  name: "zod-locales-on-demand",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => {
      const names = [...readFileSync(args.path, "utf8").matchAll(/export \{ default as (\w+) \}/g)].map((m) => m[1]);
      if (!names.includes("en") || names.length < 2) throw new Error(`zod's locales index has changed shape: ${args.path}`);
      const others = names.filter((name) => name !== "en");
      const contents = [
        'import { createRequire } from "node:module";',
        'export { default as en } from "./en.js";',
        "let all;",
        'const load = () => (all ??= createRequire(import.meta.url)("zod/v4/locales"));',
        ...others.map((name) => `export function ${name}(...args) { return load().${name}(...args); }`),
      ].join("\n");
      return { contents, loader: "js", resolveDir: path.dirname(args.path) };
    });
  },
};

/** hono's modules with the gateway's Headers, Request and Response in the place of Node's (scripts/fetch-classes.mjs). */
const honoOnOurClasses = {
  name: "hono-on-our-fetch-classes",
  setup(build) {
    build.onLoad({ filter: HONO_MODULE }, (args) =>
      isHonoModule(args.path) ? { contents: withFetchClasses(readFileSync(args.path, "utf8")), loader: "js", resolveDir: path.dirname(args.path) } : undefined,
    );
  },
};

const withTypes = !process.argv.includes("--no-types");
// Read before building: a source edited meanwhile makes the next start build again.
const readAt = new Date(Date.now() - 1);
const folders = [];
const inputFiles = buildInputs(root, folders);
const inputs = digestOf(root, inputFiles);
rmSync(path.join(root, STAMP), { force: true });
if (withTypes) rmSync(dist, { recursive: true, force: true });
else if (existsSync(dist)) removeScripts(dist);
const stage = path.join(dist, ".esm");
rmSync(stage, { recursive: true, force: true });
rmSync(path.join(dist, "code-cache"), { recursive: true, force: true });
// First the bundle and its chunks as ES modules (esbuild splits only those)...
await build({
  entryPoints: [...new Set([...packageEntries(), ...lazyEntries()])],
  outdir: stage,
  outbase: src,
  entryNames: "[dir]/[name]",
  chunkNames: "chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: UNBUNDLED,
  plugins: [zodLocalesOnDemand, honoOnOurClasses],
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  // A stack trace needs positions only (and src/ is beside dist/ in a checkout); without the sources the maps stay small.
  sourcesContent: false,
  legalComments: "eof",
  logLevel: "warning",
});
// ...then each of them as the CommonJS module it becomes in dist/, for V8's code cache (src/code-cache.ts), which Node 20
// has for CommonJS only. Node still loads each module once for the command, a plugin and an embedder alike; its maps
// lead through the first step's to src/. Strict, as the ES modules were; `import.meta.url` becomes the module's URL, and
// the require() of the bundled CommonJS packages (pino, yaml, dotenv) for Node's own modules is the module's own.
// Their import() of a module named in the code becomes require(), which is all Node 20 runs in a module compiled from
// the code cache. A module that imports what it is given at run time (the plugin loader: a plugin is an ES module of
// the user's) keeps its import(), and src/code-cache.ts leaves a module with an import() in it to Node.
const staged = scriptsUnder(stage);
// Not "type": "module" there: for esbuild an import() of one of these modules is then one of an ES module turned into
// CommonJS (its `default` the module's own), not one of a CommonJS module (its `default` all of `module.exports`).
writeFileSync(path.join(stage, "package.json"), "{}\n");
const importsGivenModules = (file) => /\bimport\((?!"[^"]*"\))/.test(readFileSync(file, "utf8"));
const asCommonJs = {
  outdir: dist,
  outbase: stage,
  bundle: false,
  format: "cjs",
  platform: "node",
  target: "node20",
  define: { "import.meta.url": "__picoclawModuleUrl" },
  banner: { js: '"use strict";var __picoclawModuleUrl=require("node:url").pathToFileURL(__filename).href;' },
  minifyWhitespace: true,
  sourcemap: true,
  sourcesContent: false,
  legalComments: "eof",
  logLevel: "warning",
};
const keepImport = staged.filter(importsGivenModules);
await build({ ...asCommonJs, entryPoints: staged.filter((file) => !keepImport.includes(file)), supported: { "dynamic-import": false } });
if (keepImport.length > 0) await build({ ...asCommonJs, entryPoints: keepImport });
rmSync(stage, { recursive: true, force: true });
// The code cache on its own, sharing no chunk: dist/main.js loads it, and what it requires, before the cache is in place.
if (existsSync(path.join(src, "code-cache.ts")))
  await build({
    entryPoints: [path.join(src, "code-cache.ts")],
    outfile: path.join(dist, "code-cache.js"),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    minifyWhitespace: true,
    sourcemap: true,
    sourcesContent: false,
    logLevel: "warning",
  });
writeFileSync(path.join(dist, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
writeCodeCache(process.argv.includes("--code-cache-later"));

if (withTypes) {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const types = spawnSync(process.execPath, [tsc, "-p", path.join(root, "tsconfig.json"), "--declaration", "--emitDeclarationOnly"], { stdio: "inherit" });
  if (types.status !== 0) process.exit(types.status ?? 1);
}

const page = path.join(root, "scripts", "build-web.mjs");
if (existsSync(page) && existsSync(path.join(root, "web"))) await import(page);
writeFileSync(path.join(root, STAMP), stampText(root, inputs, inputFiles, folders));
// The stamp is as old as what it was made from: a source edited while the build ran is newer, and is looked at again.
utimesSync(path.join(root, STAMP), readAt, readAt);
