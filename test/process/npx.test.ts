/**
 * No surprises from npx. The first `npx <bin>` in a package's own folder
 * installs the folder into npm's cache, which runs its `prepare`: with
 * dist/ current that is no build at all, and a build says so on stderr
 * first (the project's .npmrc has npm show it). And a SIGTERM sent to the
 * outer process of `npx picoclaw gateway` or of a project's `npm start`
 * (`picoclaw gateway` under a shell) stops the gateway: nothing listens on
 * its port afterwards and its process is gone. Proven in temporary
 * projects, so the repository's own dist/ is never rebuilt under other tests.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir, writeProject } from "../support/project.js";
import { WAIT_MS, waitFor, within } from "../support/wait.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..", "..");

/** npm's environment without what an outer npm (the one running these tests) set, and with a cache of its own. */
function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !/^npm_/i.test(key)) env[key] = value;
  return { ...env, npm_config_cache: tempDir("picoclaw-npm-cache-"), npm_config_update_notifier: "false", npm_config_fund: "false", ...extra };
}

describe("npx in the package's own folder", () => {
  it("runs without a build when dist/ is current, and says it is building, on stderr, before a build it must make", { timeout: 180_000 }, async () => {
    const dir = tempDir("picoclaw-npx-");
    mkdirSync(path.join(dir, "scripts"));
    mkdirSync(path.join(dir, "src"));
    for (const script of ["prepare.mjs", "build.mjs", "build-inputs.mjs", "fetch-classes.mjs", "write-code-cache.cjs"])
      copyFileSync(path.join(root, "scripts", script), path.join(dir, "scripts", script));
    copyFileSync(path.join(root, "src", "code-cache.ts"), path.join(dir, "src", "code-cache.ts"));
    copyFileSync(path.join(root, ".npmrc"), path.join(dir, ".npmrc"));
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2023", outDir: "dist", rootDir: "src", types: ["node"] },
        include: ["src"],
      }),
    );
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({
        name: "npx-demo",
        version: "1.0.0",
        type: "module",
        bin: { "npx-demo": "dist/main.js" },
        scripts: { prepare: "node scripts/prepare.mjs" },
      }),
    );
    writeFileSync(path.join(dir, "package-lock.json"), '{"lockfileVersion":3}\n');
    writeFileSync(path.join(dir, "src", "main.ts"), '#!/usr/bin/env node\nconsole.log(`ran ${process.argv.slice(2).join(" ")}`);\n');
    const npx = () => run("npx", ["npx-demo", "hello"], { cwd: dir, env: npmEnv() });

    // A checkout without dist/: the first npx builds, and says so first.
    const first = await npx();
    expect(first.stderr).toContain("picoclaw: building dist/ (first run, or the sources changed since the last build)...");
    expect(first.stdout).toBe("ran hello\n");
    expect(statSync(path.join(dir, "dist", "main.d.ts")).isFile()).toBe(true);

    // dist/ current: a first npx (a new npm cache) builds nothing.
    const built = statSync(path.join(dir, "dist", "main.js")).mtimeMs;
    const second = await npx();
    expect(second.stderr).not.toContain("building");
    expect(second.stdout).toBe("ran hello\n");
    expect(statSync(path.join(dir, "dist", "main.js")).mtimeMs).toBe(built);

    // A source changed: the next first npx builds again, saying so.
    writeFileSync(path.join(dir, "src", "main.ts"), '#!/usr/bin/env node\nconsole.log("ran the new one");\n');
    const third = await npx();
    expect(third.stderr).toContain("picoclaw: building dist/");
    expect(third.stdout).toBe("ran the new one\n");
  });
});

/** A project that depends on this package (linked, as `npm install` of it would put it) and starts the gateway with `npm start`. */
function dependentProject(): string {
  const dir = writeProject({ config: { gateway: { port: 0 }, tools: { todo: { enabled: false } } } });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "uses-picoclaw", private: true, scripts: { start: "picoclaw gateway" } }));
  mkdirSync(path.join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(root, path.join(dir, "node_modules", "picoclaw-ts"));
  symlinkSync(path.join("..", "picoclaw-ts", "dist", "main.js"), path.join(dir, "node_modules", ".bin", "picoclaw"));
  return dir;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a signal to the outer npm process", () => {
  for (const [name, command, args] of [
    ["npx picoclaw gateway", "npx", ["picoclaw", "gateway"]],
    ["npm start (its script: picoclaw gateway)", "npm", ["start"]],
  ] as const) {
    it(`SIGTERM to ${name}'s own pid stops the gateway: its process is gone and nothing listens on its port`, { timeout: 60_000 }, async () => {
      const dir = dependentProject();
      const child: ChildProcess = spawn(command, [...args], {
        cwd: dir,
        detached: true,
        env: npmEnv({ PICOCLAW_LOG_LEVEL: "info" }),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      const listening = new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) resolve(match[1]!);
        };
        child.stdout!.on("data", onData);
        child.stderr!.on("data", onData);
        child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
      });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      let gatewayPid: number | undefined;
      try {
        const url = await within('the gateway\'s "listening on" line', listening, { instead: () => output });
        gatewayPid = ((await (await fetch(`${url}/v1/status`)).json()) as { pid: number }).pid;
        // The gateway is not npm's own process: a shell stands between them.
        expect(gatewayPid).not.toBe(child.pid);
        process.kill(child.pid!, "SIGTERM");
        await within(`${name} to exit`, exited);
        await waitFor(`the gateway process ${gatewayPid} to end`, () => !alive(gatewayPid!), { ms: WAIT_MS, instead: () => output });
        await expect(fetch(`${url}/health`)).rejects.toThrow();
        expect(output).toMatch(/stopping/);
      } finally {
        // Whatever is left (nothing, when it works) goes.
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // gone
        }
        if (gatewayPid !== undefined && alive(gatewayPid)) process.kill(gatewayPid, "SIGKILL");
      }
    });
  }
});
