import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * The public entry points, each for one audience, with their export lists
 * pinned: adding or dropping a name is a decision, made here on purpose.
 * (Types are erased at run time; these are the values.)
 */
const root = path.resolve(import.meta.dirname, "..", "..");

const ENTRIES = {
  /** Tool authors: `import { defineTool, toolResult, z } from "picoclaw-ts"`. */
  ".": { file: "index", exports: ["defineTool", "toolResult", "z"] },
  /** Embedders: config, bootstrap, the runtime, the gateway, the feature port's helpers. */
  "./runtime": {
    file: "embed",
    exports: [
      "AbortedError",
      "ConfigError",
      "ModelError",
      "Outbox",
      "PicoclawError",
      "RequestError",
      "Runtime",
      "SessionState",
      "TurnTimeoutError",
      "bootstrap",
      "channelEntry",
      "configSchema",
      "createApp",
      "createLogger",
      "defineFeature",
      "depth",
      "isSubagentKey",
      "loadConfig",
      "makeHouse",
      "parentKey",
      "parseSessionKey",
      "prepare",
      "rootKey",
      "sessionKeyFor",
      "silentLogger",
      "startGateway",
      "toolGate",
    ],
  },
  /** Tests of agents and tools: the offline scripted model. */
  "./testing": { file: "testing", exports: ["ScriptedModel", "script"] },
} as const;

const SOURCES: Record<string, () => Promise<object>> = {
  index: () => import("../../src/index.js"),
  embed: () => import("../../src/embed.js"),
  testing: () => import("../../src/testing.js"),
};

const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };

describe("public entry points", () => {
  it("package.json exports exactly the three entry points, each with its types", () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [entry, { file }] of Object.entries(ENTRIES)) {
      expect(pkg.exports[entry]).toEqual({ types: `./dist/${file}.d.ts`, default: `./dist/${file}.js` });
    }
  });

  it.each(Object.entries(ENTRIES))("%s exports exactly its pinned list, from the source and from the build", async (_entry, { file, exports }) => {
    const source = await SOURCES[file]!();
    expect(Object.keys(source).sort()).toEqual([...exports].sort());
    const built = path.join(root, "dist", `${file}.js`);
    expect(existsSync(built), `${built} (npm run build)`).toBe(true);
    // dist/ is CommonJS (for V8's code cache, src/code-cache.ts): Node gives an ES module that imports it its `module.exports` as `default` too.
    const names = Object.keys((await import(/* @vite-ignore */ pathToFileURL(built).href)) as object).filter((name) => name !== "default");
    expect(names.sort()).toEqual([...exports].sort());
  });

  it("tool authors get the same zod the gateway checks their schemas with", async () => {
    const { z: exported } = await import("../../src/index.js");
    expect(exported).toBe(z);
  });

  it("the built entry points share one copy of zod and of our code: a plugin's picoclaw-ts is the gateway's own", () => {
    // dist/ is bundled with code splitting (scripts/build.mjs): what the
    // command and the three entries have in common is in shared chunks.
    const files = readdirSync(path.join(root, "dist"), { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"));
    const defining = (marker: string) => files.filter((file) => readFileSync(path.join(root, "dist", file), "utf8").includes(marker));
    expect(defining('$constructor("ZodError"')).toHaveLength(1);
    expect(defining("PicoclawError=class extends Error")).toHaveLength(1);
    const shared = defining('$constructor("ZodError"')[0]!;
    // The command is dist/command.js (dist/main.js only turns the code cache on and loads it).
    for (const entry of ["index.js", "embed.js", "command.js"]) expect(readFileSync(path.join(root, "dist", entry), "utf8"), entry).toContain("./chunk-");
    expect(["index.js", "embed.js", "command.js"]).not.toContain(shared);
  });

  it("the scripted model runs the calls a script names, then summarises", async () => {
    const { ScriptedModel, script } = await import("../../src/testing.js");
    const text = script(["clock", { time_zone: "UTC" }], ["todo"]);
    expect(text).toBe('CALL clock {"time_zone":"UTC"}\nCALL todo {}');
    const model = new ScriptedModel("local");
    const first = await model.chat({ messages: [{ role: "user", content: text }], tools: [], signal: new AbortController().signal });
    expect(first.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([["clock", '{"time_zone":"UTC"}']]);
  });
});
