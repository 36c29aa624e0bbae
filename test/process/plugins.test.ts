import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { prepare } from "../../src/bootstrap.js";
import { runCli } from "../../src/cli.js";
import { loadConfig } from "../../src/house.js";
import { ConfigError } from "../../src/errors.js";
import type { RecordedRequest } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, type Harness, jsonOf, openaiConfig, pluggedHarness, recordingLogger, tempDir, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const example = (name: string) => path.join(root, "examples", "tools", name);
const fixture = (name: string) => path.join(root, "test", "fixtures", "plugins", name);

const model = useScriptedModel();

const AGENTS = {
  main: "---\nname: Main\n---\nYou take notes.",
  nonotes: "---\nname: No notes\ntools: [clock, subagent]\n---\nYou have no notes.",
};

function gateway(tools: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Harness> {
  return pluggedHarness({
    agents: AGENTS,
    env,
    config: {
      ...openaiConfig(model.server.url),
      tools: { plugins: [example("notes.js"), example("clock.js"), fixture("misbehaving.js")], ...DEFAULT_TOOLS_OFF, ...tools },
    },
  });
}

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name) as string[];
const lastResults = (r: RecordedRequest) => (r.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").map((m) => m.content);

describe("plugin tools through the gateway", () => {
  it("are shown with their zod schema and run, like built-in tools", async () => {
    const h = await gateway();
    const { json } = await h.chat({
      message: [call("notes", { action: "add", text: "the code is 42" }), call("notes", { action: "list" })].join("\n"),
      session: "n",
    });
    expect(json.reply).toBe("done: Noted (1 notes). | 1. the code is 42");
    const first = model.server.requests.at(-3)!;
    expect(toolNames(first)).toEqual(["clock", "hanger", "notes", "spawn", "subagent", "thrower"]);
    const notes = first.body.tools.find((t: { function: { name: string } }) => t.function.name === "notes");
    expect(notes.function.parameters).toMatchObject({ type: "object", properties: { action: { enum: ["add", "list", "clear"] } }, required: ["action"] });
    expect(json.delivered).toEqual([{ from: "agent", text: json.reply }]);
  });

  it("an example plugin answers for real: the clock in a time zone, and a bad zone is an error result", async () => {
    const h = await gateway();
    const { json } = await h.chat({ message: [call("clock", { time_zone: "Asia/Tokyo" }), call("clock", { time_zone: "Mars/Olympus" })].join("\n") });
    const [tokyo, mars] = json.reply.replace(/^done: /, "").split(" | ");
    expect(tokyo).toMatch(/^\w+day, \d{1,2} \w+ \d{4} at \d{2}:\d{2}:\d{2} .* \(Asia\/Tokyo\)$/);
    expect(mars).toBe('unknown time zone "Mars/Olympus"; use an IANA name such as Europe/Paris or America/New_York');
  });

  it("run only when enabled and allowlisted", async () => {
    const h = await gateway({ clock: { enabled: false }, shy: { enabled: true } });
    await h.chat({ message: "SAY hi", agent: "nonotes" });
    expect(toolNames(model.server.requests.at(-1)!)).toEqual(["subagent"]);
    await h.chat({ message: call("notes", { action: "list" }), agent: "nonotes" });
    expect(lastResults(model.server.requests.at(-1)!)[0]).toBe('tool "notes" is not available to this agent; available tools: subagent');
    await h.chat({ message: "SAY hi" });
    expect(toolNames(model.server.requests.at(-1)!)).toEqual(["hanger", "notes", "shy", "spawn", "subagent", "thrower"]);
    const agents = await jsonOf(await h.request("/v1/agents"));
    expect(agents.agents.find((a: { id: string }) => a.id === "main").tools).toContain("shy");
  });

  it("PICOCLAW_TOOLS_<NAME>_ENABLED switches a plugin tool, whatever the file says", async () => {
    const h = await gateway({ shy: { enabled: false } }, { PICOCLAW_TOOLS_SHY_ENABLED: "true", PICOCLAW_TOOLS_NOTES_ENABLED: "0" });
    await h.chat({ message: "SAY hi" });
    expect(toolNames(model.server.requests.at(-1)!)).toContain("shy");
    expect(toolNames(model.server.requests.at(-1)!)).not.toContain("notes");
  });

  it("a tool name with - is switched by a variable that writes it as _", async () => {
    const dir = tempDir("", true);
    writeProject(
      {
        config: { tools: { plugins: ["./dash.js"] } },
        files: {
          "dash.js":
            'import { defineTool, toolResult, z } from "picoclaw-ts";\nexport default defineTool({ name: "my-tool", description: "Has a dash.", parameters: z.object({}), execute: () => toolResult.text("x") });\n',
        },
      },
      dir,
    );
    const loaded = loadConfig({ env: { PICOCLAW_TOOLS_MY_TOOL_ENABLED: "false", "PICOCLAW_TOOLS_MY-TOOL_ENABLED": "false" }, cwd: dir });
    expect(loaded.warnings).toEqual([
      "PICOCLAW_TOOLS_MY-TOOL_ENABLED: a variable name holds only letters, digits and _; write every other character of the tool name as _; ignored",
    ]);
    const { runtime, warnings } = await prepare(loaded, { logger: recordingLogger() });
    onTestFinished(() => runtime.close(0));
    expect(runtime.toolOverview().find((tool) => tool.name === "my-tool")).toEqual({ name: "my-tool", origin: "plugin ./dash.js", enabled: false });
    expect(warnings.join("\n")).not.toMatch(/no tool named "my_tool"/);
  });

  it("their per-session state is gone after /clear, and never shared between sessions", async () => {
    const h = await gateway();
    await h.chat({ message: call("notes", { action: "add", text: "keep me" }), session: "a" });
    await h.chat({ message: call("notes", { action: "add", text: "other" }), session: "b" });
    expect((await h.chat({ message: call("notes", { action: "list" }), session: "a" })).json.reply).toBe("done: 1. keep me");
    await h.chat({ message: "/clear", session: "a" });
    expect((await h.chat({ message: call("notes", { action: "list" }), session: "a" })).json.reply).toBe("done: No notes yet.");
    expect((await h.chat({ message: call("notes", { action: "list" }), session: "b" })).json.reply).toBe("done: 1. other");
  });

  it("their per-session state is gone when a sub-turn ends", async () => {
    const h = await gateway();
    const task = [call("notes", { action: "add", text: "child note" }), call("notes", { action: "list" })].join("\n");
    const { json } = await h.chat({ message: call("subagent", { task }), session: "sub" });
    expect(json.reply).toContain("1. child note");
    expect(h.runtime.stats().toolStates).toBe(0);
    expect((await h.chat({ message: call("notes", { action: "list" }), session: "sub" })).json.reply).toBe("done: No notes yet.");
  });

  it("a plugin that throws gives an error result; one that hangs past tools.<name>.timeout_ms too; the gateway keeps serving", async () => {
    const h = await gateway({ hanger: { timeout_ms: 50 } });
    const { status, json } = await h.chat({ message: [call("thrower", {}), call("hanger", {})].join("\n") });
    expect(status).toBe(200);
    expect(json.reply.replace(/^done: /, "").split(" | ")).toEqual([
      'tool "thrower" failed: the plugin broke',
      'tool "hanger" did not finish within 50 ms (tools.hanger.timeout_ms); try again or do without it',
    ]);
    expect((await h.chat({ message: "SAY still here" })).json.reply).toBe("still here");
  });
});

describe("loading plugins", () => {
  async function problems(plugins: string[], files: Record<string, string> = {}): Promise<string[]> {
    const dir = writeProject({ config: { tools: { plugins } }, files });
    try {
      await prepare(loadConfig({ env: {}, cwd: dir }), { logger: recordingLogger() });
    } catch (error) {
      if (error instanceof ConfigError) return [...error.problems];
      throw error;
    }
    throw new Error("expected start-up to fail");
  }

  it.each([
    ["a missing module", "./nope.js", /^tools\.plugins\[0\] \(".\/nope\.js"\): cannot load the module: /],
    [
      "a package that is not installed",
      "no-such-package-xyz",
      /package "no-such-package-xyz" is not installed in .* or a folder above it \(npm install no-such-package-xyz there\)$/,
    ],
    ["a module with a syntax error", fixture("syntax-error.js"), /cannot load the module: /],
    ["a module that exports no tool", fixture("no-tools.js"), /exports no tool \(export default defineTool\(\{\.\.\.\}\), or a list of tools\)$/],
    [
      "parameters that are not an object schema",
      fixture("bad-schema.js"),
      /a tool "bad" parameters must be an object schema \(z\.object\(\{\.\.\.\}\)\), not "string"$/,
    ],
    [
      "parameters that are neither zod 4 nor a JSON Schema object",
      fixture("not-zod.js"),
      /a tool "plain" parameters must be a zod 4 schema \(import \{ z \} from "picoclaw-ts"\) or a JSON Schema object$/,
    ],
    [
      "JSON Schema parameters that are not an object schema",
      fixture("json-not-object.js"),
      /a tool "scalar": parameters does not have type "object" at the top$/,
    ],
    ["a name clash with a built-in tool", fixture("clash.js"), /tool "todo" clashes with the tool of the same name from the built-in tools$/],
  ])("%s stops start-up naming the module", async (_case, spec, message) => {
    const found = await problems([spec]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });

  it("a tool listed twice clashes, naming both modules", async () => {
    const found = await problems([example("clock.js"), example("clock.js")]);
    expect(found).toEqual([
      `tools.plugins[1] (${JSON.stringify(example("clock.js"))}): tool "clock" clashes with the tool of the same name from tools.plugins[0] (${JSON.stringify(example("clock.js"))})`,
    ]);
  });

  it("relative paths resolve against the config file's folder", async () => {
    const dir = tempDir("", true);
    writeProject(
      {
        config: { tools: { plugins: ["./tools/hello.js"] } },
        files: {
          "tools/hello.js":
            'import { defineTool, toolResult, z } from "picoclaw-ts";\nexport default defineTool({ name: "hello", description: "Says hello.", parameters: z.object({}), execute: () => toolResult.text("hello") });\n',
        },
      },
      dir,
    );
    const { runtime } = await prepare(loadConfig({ env: {}, cwd: path.join(root, "test"), argv: ["--config", path.join(dir, "picoclaw.config.json")] }), {
      logger: recordingLogger(),
    });
    onTestFinished(() => runtime.close(0));
    expect(runtime.toolOverview().find((tool) => tool.name === "hello")?.origin).toBe("plugin ./tools/hello.js");
  });

  it("package names resolve from the config file's folder as an ES module import would: ESM-only, dual, CommonJS, scoped subpaths", async () => {
    const dir = tempDir("", true);
    const esmTool = (name: string) =>
      `import { z } from "zod";\nexport default { name: "${name}", description: "From a package.", parameters: z.object({}), execute: () => ({ forLLM: "${name} ran", silent: false, isError: false }) };\n`;
    writeProject(
      {
        config: { tools: { plugins: ["esm-only", "dual", "cjs-compiled", "@acme/tools/weather"] } },
        files: {
          "node_modules/esm-only/package.json": JSON.stringify({ name: "esm-only", type: "module", exports: { ".": { import: "./index.js" } } }),
          "node_modules/esm-only/index.js": esmTool("esm_only"),
          "node_modules/dual/package.json": JSON.stringify({ name: "dual", exports: { ".": { require: "./index.cjs", import: "./index.mjs" } } }),
          "node_modules/dual/index.mjs": esmTool("dual_esm"),
          "node_modules/dual/index.cjs": "module.exports = { name: 'dual_cjs' };\n",
          "node_modules/cjs-compiled/package.json": JSON.stringify({ name: "cjs-compiled", main: "lib/index.js" }),
          "node_modules/cjs-compiled/lib/index.js":
            'const { z } = require("zod");\nObject.defineProperty(exports, "__esModule", { value: true });\nexports.default = { name: "cjs_tool", description: "Compiled to CommonJS.", parameters: z.object({}), execute: () => ({ forLLM: "cjs ran", silent: false, isError: false }) };\n',
          "node_modules/@acme/tools/package.json": JSON.stringify({ name: "@acme/tools", type: "module", exports: { "./weather": "./weather.js" } }),
          "node_modules/@acme/tools/weather.js": esmTool("acme_weather"),
        },
      },
      dir,
    );
    const { runtime } = await prepare(loadConfig({ env: {}, cwd: dir }), { logger: recordingLogger() });
    onTestFinished(() => runtime.close(0));
    const origins = new Map(runtime.toolOverview().map((tool) => [tool.name, tool.origin]));
    expect(["esm_only", "dual_esm", "cjs_tool", "acme_weather"].map((n) => origins.get(n))).toEqual([
      "plugin esm-only",
      "plugin dual",
      "plugin cjs-compiled",
      "plugin @acme/tools/weather",
    ]);
  });

  it("picoclaw agents shows where plugged tools come from; a broken plugin exits 2", async () => {
    const dir = writeProject({ config: { tools: { plugins: [example("clock.js"), fixture("misbehaving.js")], shy: { enabled: false } } } });
    const out: string[] = [];
    const err: string[] = [];
    const io = { env: {}, cwd: dir, stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), logger: recordingLogger() };
    expect(await runCli({ ...io, argv: ["agents"] })).toBe(0);
    const text = out.join("\n");
    expect(text).toContain(`clock    plugin ${example("clock.js")}`);
    expect(text).toMatch(/shy\s+plugin .*misbehaving\.js\s+no/);
    const broken = writeProject({ config: { tools: { plugins: [fixture("no-tools.js")] } } });
    expect(await runCli({ ...io, cwd: broken, argv: ["gateway"] })).toBe(2);
    expect(err.join("\n")).toMatch(/invalid configuration:\n {2}- tools\.plugins\[0\] .*exports no tool/);
  });

  it("tools.<name> sections that name no tool are a start-up warning", async () => {
    const h = await pluggedHarness({ config: { tools: { plugins: [example("clock.js")], clok: { enabled: true } } } });
    expect(h.warnings).toContain('tools.clok: there is no tool named "clok"; this section does nothing');
  });
});
