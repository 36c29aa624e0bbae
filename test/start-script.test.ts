/**
 * `npm start` (scripts/start.mjs) runs the build at once, and rebuilds first
 * only when a source is newer than the build. Proven on a small project of
 * the same shape in a temporary folder, so the repository's own dist/ is
 * never rewritten while other tests use it.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir } from "./support/project.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

describe("npm start's script", () => {
  it("builds when there is no build or a source, a build setting or the installed packages are newer, and otherwise runs the build at once", {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir("picoclaw-start-");
    mkdirSync(path.join(dir, "scripts"));
    mkdirSync(path.join(dir, "src"));
    for (const script of ["start.mjs", "build.mjs"]) copyFileSync(path.join(root, "scripts", script), path.join(dir, "scripts", script));
    // The build's tools from the repository's node_modules, under a record of installed packages of this project's own.
    mkdirSync(path.join(dir, "node_modules"));
    for (const name of ["esbuild", "@esbuild", "typescript", "@types"])
      symlinkSync(path.join(root, "node_modules", name), path.join(dir, "node_modules", name));
    const installed = path.join(dir, "node_modules", ".package-lock.json");
    writeFileSync(installed, "{}\n");
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2023", outDir: "dist", rootDir: "src" },
        include: ["src"],
      }),
    );
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const source = path.join(dir, "src", "main.ts");
    writeFileSync(source, 'console.log(`ran ${process.argv.slice(2).join(" ")}`);\n');
    const past = new Date(Date.now() - 60_000);
    for (const file of [source, installed, path.join(dir, "tsconfig.json"), path.join(dir, "scripts", "build.mjs")]) utimesSync(file, past, past);
    const start = () => run(process.execPath, [path.join(dir, "scripts", "start.mjs"), "gateway"], { cwd: dir });
    /** Makes `file` newer than the build, starts, and expects a build. */
    const changedThenStart = async (file: string, by: number) => {
      const later = new Date(Date.now() + by);
      utimesSync(file, later, later);
      const started = await start();
      expect(started.stderr, file).toContain("building");
      // Back in the past, so that the next change is the only thing newer than the build.
      utimesSync(file, past, past);
      const again = await start();
      expect(again.stderr, file).toBe("");
      return started;
    };

    const first = await start();
    expect(first.stderr).toContain("building");
    expect(first.stdout).toBe("ran gateway\n");

    const second = await start();
    expect(second.stderr).toBe("");
    expect(second.stdout).toBe("ran gateway\n");

    writeFileSync(source, 'console.log("ran the new one");\n');
    expect((await changedThenStart(source, 5_000)).stdout).toBe("ran the new one\n");
    // What is bundled, and how.
    await changedThenStart(path.join(dir, "scripts", "build.mjs"), 10_000);
    // npm rewrites its record of node_modules at every install, update or removal: the bundle carries copies of the packages.
    await changedThenStart(installed, 15_000);
  });
});
