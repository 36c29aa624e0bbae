/**
 * Plugins written the way users write them, loaded by the real `picoclaw`
 * command: a `.js` file in a folder outside any project that installed
 * picoclaw-ts (it imports "picoclaw-ts" all the same), in a project of any
 * module type, returning plain strings and JSON values, with plain JSON
 * Schema parameters.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tempDir, writeProject } from "../support/project.js";

const run = promisify(execFile);
const main = path.resolve(import.meta.dirname, "..", "..", "dist", "main.js");

const PLUGIN = [
  'import { defineTool, z } from "picoclaw-ts";',
  "export const tools = [",
  '  defineTool({ name: "stamp", description: "Returns a plain string.", parameters: z.object({}), execute: () => "stamped" }),',
  '  { name: "weather", description: "Plain JSON Schema, a JSON value back.",',
  '    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },',
  '    execute: ({ city }) => ({ city, sky: "clear" }) },',
  "];",
  "",
].join("\n");

const SCRIPT = ["CALL stamp {}", 'CALL weather {"city":"Oslo"}', 'CALL weather {"town":"Oslo"}'].join("\n");

describe("plugins written anywhere", () => {
  it.each([
    ["with no package.json", undefined],
    ['in a "type": "commonjs" project (what npm init -y writes)', { name: "mine", version: "1.0.0", type: "commonjs" }],
    ['in a "type": "module" project', { name: "mine", version: "1.0.0", type: "module" }],
  ])("a .js plugin outside any project that installed picoclaw-ts loads %s", { timeout: 60_000 }, async (_case, packageJson) => {
    // os.tmpdir(): no node_modules above it holds picoclaw-ts.
    const dir = writeProject(
      {
        config: { tools: { plugins: ["./my-tools.js"], subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } } },
        files: { "my-tools.js": PLUGIN, ...(packageJson ? { "package.json": JSON.stringify(packageJson) } : {}) },
      },
      tempDir("picoclaw-outside-"),
    );
    const { stdout } = await run(process.execPath, [main, "agent", "-m", SCRIPT], { cwd: dir, env: { ...process.env, PICOCLAW_LOG_LEVEL: "warn" } });
    expect(stdout).toContain("stamped");
    expect(stdout).toContain('2. weather:\n   ```json\n   {\n     "city": "Oslo",\n     "sky": "clear"\n   }');
    expect(stdout).toContain('invalid arguments for tool "weather": city: required');
  });
});
