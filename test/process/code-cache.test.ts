/**
 * V8's code cache for dist/ (src/code-cache.ts): the build writes it from a
 * gateway's start, and a start compiles what it loads from it. Proven on
 * the real process: a module loaded with `--import` prints, as the process
 * exits, which modules the cache compiled (`used`), which V8 refused
 * (`rejected`), which had none for their source (`missing`) and which were
 * not looked up once V8 had refused one (`skipped`).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { CodeCacheStats } from "../../src/code-cache.js";
import { picoclawProcess } from "../support/cli.js";
import { writeProject } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");

/** Prints, at exit, the stats of the code cache that the dist/ at PICOCLAW_TEST_DIST installed. */
const STATS = `data:text/javascript,${encodeURIComponent(`
import { createRequire } from "node:module";
import { writeSync } from "node:fs";
import path from "node:path";
const dist = process.env.PICOCLAW_TEST_DIST;
process.on("exit", () => {
  const stats = createRequire(path.join(dist, "main.js"))("./code-cache.js").codeCacheStats();
  writeSync(2, "CODE CACHE " + JSON.stringify(stats) + "\\n");
});
`)}`;

/** `node [nodeArgs] <dist>/main.js <args>` in `cwd` with the stats printed at exit: its exit code and all it printed. */
const command = (dist: string, args: string[], cwd: string, nodeArgs: string[] = []) =>
  picoclawProcess(args, cwd, [], { nodeArgs: [...nodeArgs, "--import", STATS], logLevel: "warn", dist, env: { PICOCLAW_TEST_DIST: dist } });

function statsIn(output: string): CodeCacheStats {
  const line = /CODE CACHE (.*)\n/.exec(output);
  if (!line) throw new Error(`no CODE CACHE line in:\n${output}`);
  return JSON.parse(line[1]!) as CodeCacheStats;
}

/** `entry` and every module of dist/ it requires as it loads (`var import_x = require(...)` at its top level, as esbuild writes it), by path relative to `dist`. */
function requiredBy(dist: string, entry: string): Set<string> {
  const found = new Set<string>();
  const visit = (file: string) => {
    const name = path.relative(dist, file);
    if (found.has(name)) return;
    found.add(name);
    for (const [, target] of readFileSync(file, "utf8").matchAll(/\bvar import_[\w$]+=require\("(\.\/[^"]+\.js)"\)/g))
      visit(path.join(path.dirname(file), target!));
  };
  visit(path.join(dist, entry));
  return found;
}

/**
 * What the command loads after dist/main.js has turned the cache on: dist/command.js and the modules it requires, but
 * for those dist/main.js loaded before, which Node compiled as it does.
 */
function loadedWithTheCommand(dist: string): string[] {
  const launcher = requiredBy(dist, "main.js");
  return [...requiredBy(dist, "command.js")].filter((name) => !launcher.has(name)).sort();
}

const relative = (files: string[], dist: string) => files.map((file) => path.relative(dist, file)).sort();

const built = path.join(root, "dist");

describe("the code cache", () => {
  it("a gateway's start compiles every module it loads from the build's code cache", async () => {
    const project = writeProject({ config: { gateway: { port: 0 } } });
    const gateway = command(built, ["gateway"], project);
    let url: string | undefined;
    await waitFor('the gateway\'s "listening on" line', () => (url = /listening on (http:\/\/\S+)/.exec(gateway.output())?.[1]) !== undefined, {
      instead: gateway.output,
    });
    expect((await fetch(`${url}/health`)).status).toBe(200);
    gateway.child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", gateway.exited)).toBe(0);
    const stats = statsIn(gateway.output());
    expect(stats.rejected).toEqual([]);
    expect(stats.missing).toEqual([]);
    const used = relative(stats.used, built);
    const needed = loadedWithTheCommand(built);
    expect(needed.length).toBeGreaterThan(5);
    for (const name of needed) expect(used).toContain(name);
    // What loads before the cache is turned on (dist/main.js itself) gets none: a start never reads one for it.
    expect(existsSync(path.join(built, "code-cache", "main.js.bin"))).toBe(false);
    expect(existsSync(path.join(built, "code-cache", "command.js.bin"))).toBe(true);
  });

  it("a build in a folder with no agents folder (the image's build stage) writes the cache, and a start there uses it", { timeout: 60_000 }, async () => {
    const copy = mkdtempSync(path.join(tmpdir(), "picoclaw-code-cache-build-"));
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
    for (const entry of ["package.json", "tsconfig.json", "scripts", "src", "web"]) cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true });
    symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"));
    const build = spawnSync(process.execPath, [path.join(copy, "scripts", "build.mjs"), "--no-types"], { cwd: copy, encoding: "utf8" });
    expect(build.status, build.stderr).toBe(0);
    expect(build.stderr).not.toContain("no code cache");
    const dist = path.join(copy, "dist");
    expect(existsSync(path.join(dist, "code-cache", "command.js.bin"))).toBe(true);

    const project = writeProject({ config: { gateway: { port: 0 } } });
    const gateway = command(dist, ["gateway"], project);
    await waitFor('the gateway\'s "listening on" line', () => /listening on http/.test(gateway.output()), { instead: gateway.output });
    gateway.child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", gateway.exited)).toBe(0);
    const stats = statsIn(gateway.output());
    expect(stats.rejected).toEqual([]);
    expect(relative(stats.used, dist)).toEqual(loadedWithTheCommand(dist));
  });

  it("npm start's build (--code-cache-later) returns without waiting for the cache, which a process of its own writes for the starts after", {
    timeout: 60_000,
  }, async () => {
    const copy = mkdtempSync(path.join(tmpdir(), "picoclaw-code-cache-later-"));
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
    for (const entry of ["package.json", "tsconfig.json", "scripts", "src", "web"]) cpSync(path.join(root, entry), path.join(copy, entry), { recursive: true });
    symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"));
    const build = spawnSync(process.execPath, [path.join(copy, "scripts", "build.mjs"), "--no-types", "--code-cache-later"], { cwd: copy, encoding: "utf8" });
    expect(build.status, build.stderr).toBe(0);
    const dist = path.join(copy, "dist");
    const cached = path.join(dist, "code-cache", "command.js.bin");
    await waitFor("the code cache written after the build", () => existsSync(cached), { ms: 30_000 });
    const project = writeProject({ config: { gateway: { port: 0 } } });
    const version = command(dist, ["--version"], project);
    expect(await within("--version to exit", version.exited)).toBe(0);
    const stats = statsIn(version.output());
    expect(stats.rejected).toEqual([]);
    expect(relative(stats.used, dist)).toContain("command.js");
  });

  it("a module changed after the build runs its new source, not the cache made for the old one", async () => {
    // An edit of the same length (a patched constant, say): V8's own check of a cache looks at the source's length only.
    const copy = mkdtempSync(path.join(tmpdir(), "picoclaw-code-cache-"));
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(path.join(root, "package.json"), path.join(copy, "package.json"));
    cpSync(built, path.join(copy, "dist"), { recursive: true });
    const dist = path.join(copy, "dist");
    const changed = loadedWithTheCommand(dist).find((name) => readFileSync(path.join(dist, name), "utf8").includes("start the HTTP gateway"));
    expect(changed).toBeDefined();
    const file = path.join(dist, changed!);
    writeFileSync(file, readFileSync(file, "utf8").replace("start the HTTP gateway", "START THE HTTP GATEWAY"));

    const help = command(dist, ["--help"], copy);
    expect(await within("--help to exit", help.exited)).toBe(0);
    expect(help.output()).toContain("START THE HTTP GATEWAY");
    const stats = statsIn(help.output());
    expect(relative(stats.missing, dist)).toEqual([changed]);
    expect(relative(stats.used, dist)).not.toContain(changed);
    expect(stats.used.length).toBeGreaterThan(0);
  });

  it("under --enable-source-maps Node compiles the modules itself, and stack traces name src/ lines", async () => {
    const script = [
      `require(${JSON.stringify(path.join(built, "code-cache.js"))}).useCodeCache(${JSON.stringify(built)});`,
      `try { require(${JSON.stringify(path.join(built, "index.js"))}).defineTool({}); } catch (error) { console.log(error.stack); }`,
    ].join("\n");
    const traced = spawnSync(process.execPath, ["--enable-source-maps", "--import", STATS, "-e", script], {
      env: { ...process.env, PICOCLAW_TEST_DIST: built },
      encoding: "utf8",
    });
    expect(traced.status).toBe(0);
    expect(traced.stdout).toMatch(/at (Object\.)?defineTool \(.*src\/tools\/tool\.ts:\d+:\d+\)/);
    const stats = statsIn(traced.stderr);
    expect(stats.used).toEqual([]);
    expect(stats.rejected).toEqual([]);
  });

  it("a cache V8 refuses (other V8 flags than the build's) is compiled from source, and the command works", async () => {
    const version = command(built, ["--version"], root, ["--stack-size=900"]);
    expect(await within("--version to exit", version.exited)).toBe(0);
    expect(version.output()).toMatch(/^picoclaw \d+\.\d+\.\d+/);
    const stats = statsIn(version.output());
    expect(stats.used).toEqual([]);
    // The first module's refused, the rest not read: V8 refuses them all for the one reason.
    expect(relative(stats.rejected, built)).toEqual(["command.js"]);
    expect(relative([...stats.rejected, ...stats.skipped], built).sort()).toEqual(loadedWithTheCommand(built));
  });
});
