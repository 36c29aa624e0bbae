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
  it("builds when there is no build or a source (or the build script) is newer, and otherwise runs the build at once", { timeout: 120_000 }, async () => {
    const dir = tempDir("picoclaw-start-");
    mkdirSync(path.join(dir, "scripts"));
    mkdirSync(path.join(dir, "src"));
    for (const script of ["start.mjs", "build.mjs"]) copyFileSync(path.join(root, "scripts", script), path.join(dir, "scripts", script));
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
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
    const start = () => run(process.execPath, [path.join(dir, "scripts", "start.mjs"), "gateway"], { cwd: dir });

    const first = await start();
    expect(first.stderr).toContain("building");
    expect(first.stdout).toBe("ran gateway\n");

    const second = await start();
    expect(second.stderr).toBe("");
    expect(second.stdout).toBe("ran gateway\n");

    writeFileSync(source, 'console.log("ran the new one");\n');
    const later = new Date(Date.now() + 5000);
    utimesSync(source, later, later);
    const third = await start();
    expect(third.stderr).toContain("building");
    expect(third.stdout).toBe("ran the new one\n");

    // The build's own script counts as a source: what is bundled, and how.
    const evenLater = new Date(Date.now() + 10_000);
    utimesSync(path.join(dir, "scripts", "build.mjs"), evenLater, evenLater);
    const fourth = await start();
    expect(fourth.stderr).toContain("building");
    expect(fourth.stdout).toBe("ran the new one\n");
  });
});
