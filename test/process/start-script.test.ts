/**
 * `npm start` (scripts/start.mjs) runs the build at once, and builds first
 * only when the build is missing or was made from other inputs than the
 * project's now. Proven on a small project of the same shape in a
 * temporary folder, so the repository's own dist/ is never rewritten while
 * other tests use it.
 */
import { execFile } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/project.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..", "..");

describe("npm start's script", () => {
  it("builds when there is no build or an input changed (a source, a build setting, the packages), not when files only got new times, and otherwise runs the build at once", {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir("picoclaw-start-");
    mkdirSync(path.join(dir, "scripts"));
    mkdirSync(path.join(dir, "src"));
    for (const script of ["start.mjs", "build.mjs", "build-inputs.mjs", "fetch-classes.mjs", "write-code-cache.cjs"])
      copyFileSync(path.join(root, "scripts", script), path.join(dir, "scripts", script));
    copyFileSync(path.join(root, "src", "code-cache.ts"), path.join(dir, "src", "code-cache.ts"));
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2023", outDir: "dist", rootDir: "src" },
        include: ["src"],
      }),
    );
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const lock = path.join(dir, "package-lock.json");
    writeFileSync(lock, '{"lockfileVersion":3}\n');
    const source = path.join(dir, "src", "main.ts");
    writeFileSync(source, 'console.log(`ran ${process.argv.slice(2).join(" ")}`);\n');
    const start = () => run(process.execPath, [path.join(dir, "scripts", "start.mjs"), "gateway"], { cwd: dir });
    const builds = async () => (await start()).stderr.includes("building");

    const first = await start();
    expect(first.stderr).toContain("building");
    expect(first.stdout).toBe("ran gateway\n");
    // Running needs only the JavaScript: a start's build leaves type declarations to `npm run build`.
    expect(existsSync(path.join(dir, "dist", "main.js"))).toBe(true);
    expect(existsSync(path.join(dir, "dist", "main.d.ts"))).toBe(false);

    const second = await start();
    expect(second.stderr).toBe("");
    expect(second.stdout).toBe("ran gateway\n");

    // New times, same contents (a copy, a checkout): no build, then or at the next start.
    const later = new Date(Date.now() + 5_000);
    for (const file of [source, lock, path.join(dir, "scripts", "build.mjs")]) utimesSync(file, later, later);
    expect(await builds()).toBe(false);
    expect(await builds()).toBe(false);

    writeFileSync(source, 'console.log("ran the new one");\n');
    const changed = await start();
    expect(changed.stderr).toContain("building");
    expect(changed.stdout).toBe("ran the new one\n");
    expect(await builds()).toBe(false);
    // What is bundled, and how.
    appendFileSync(path.join(dir, "scripts", "build.mjs"), "// changed\n");
    expect(await builds()).toBe(true);
    // The bundle carries copies of the packages: another lock file, another build.
    writeFileSync(lock, '{"lockfileVersion":3,"packages":{}}\n');
    expect(await builds()).toBe(true);
    expect(await builds()).toBe(false);
    // A source added (with a time older than the build, as a checkout may give it), in a new folder too, or removed.
    const old = new Date(Date.now() - 3_600_000);
    const added = path.join(dir, "src", "extra.ts");
    writeFileSync(added, "export const extra = 1;\n");
    utimesSync(added, old, old);
    expect(await builds()).toBe(true);
    expect(await builds()).toBe(false);
    mkdirSync(path.join(dir, "src", "deeper"));
    const nested = path.join(dir, "src", "deeper", "more.ts");
    writeFileSync(nested, "export const more = 2;\n");
    utimesSync(nested, old, old);
    expect(await builds()).toBe(true);
    rmSync(added);
    expect(await builds()).toBe(true);
    expect(await builds()).toBe(false);
    // A settings file that was not there appears (the page's build script).
    writeFileSync(path.join(dir, "scripts", "build-web.mjs"), "// the page\n");
    utimesSync(path.join(dir, "scripts", "build-web.mjs"), old, old);
    expect(await builds()).toBe(true);
  });
});
