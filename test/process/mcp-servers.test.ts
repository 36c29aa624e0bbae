import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { AbortedError } from "../../src/errors.js";
import type { McpHub, McpStartReport } from "../../src/features/mcp/index.js";
import type { AnyTool } from "../../src/tools/registry.js";
import { ToolSet, parametersSchema } from "../../src/tools/tool-set.js";
import { type TestHub, fixtureServer, testHub, toolCall, toolContext } from "../support/mcp.js";
import { eventually } from "../support/wait.js";

const set = (tools: AnyTool[]) => new ToolSet(tools);

const toolOf = (hub: McpHub, name: string): AnyTool => {
  const tool = hub.tools().find((t) => t.name === name);
  if (!tool)
    throw new Error(
      `no tool ${name} among ${hub
        .tools()
        .map((t) => t.name)
        .join(", ")}`,
    );
  return tool;
};

describe("MCP servers over stdio (one hub, two servers running the fixture)", () => {
  let t: TestHub;
  let report: McpStartReport;
  let tools: ToolSet;
  const base = mkdtempSync(path.join(tmpdir(), "picoclaw-mcp-"));
  mkdirSync(path.join(base, "sub"));

  beforeAll(async () => {
    t = testHub(
      {
        fx: fixtureServer(),
        quick: fixtureServer({ timeout_ms: 250, cwd: "sub", env: { FIXTURE_HELLO: "from the server's env" } }),
      },
      { baseDir: base, env: { FIXTURE_HELLO: "from the gateway" } },
    );
    report = await t.hub.start();
    tools = set(report.tools);
  });
  afterAll(async () => {
    await t.hub.close();
    rmSync(base, { recursive: true, force: true });
  });

  const run = (name: string, args: unknown = {}, signal?: AbortSignal) => tools.execute(toolCall(name, args), toolContext(signal));

  it("lists each server's tools as mcp_<server>_<tool>, enabled by default, and says where they came from", () => {
    const fx = report.tools.filter((tool) => t.hub.origin(tool.name) === "fx").map((tool) => tool.name);
    expect(fx).toEqual([
      "mcp_fx_add",
      "mcp_fx_big",
      "mcp_fx_calls",
      "mcp_fx_crash",
      "mcp_fx_echo",
      "mcp_fx_fail",
      "mcp_fx_grow",
      "mcp_fx_leak",
      "mcp_fx_picture",
      "mcp_fx_slow",
      "mcp_fx_whoami",
    ]);
    expect(report.tools).toHaveLength(22);
    expect(t.hub.origin("mcp_quick_echo")).toBe("quick");
    expect(t.hub.origin("echo")).toBeUndefined();
    expect(report.tools.every((tool) => tool.enabledByDefault === true)).toBe(true);
    expect(t.hub.status()).toMatchObject({ fx: { state: "up" }, quick: { state: "up" } });
  });

  it("shows the model each server's JSON Schema (without $schema) and description", () => {
    expect(tools.specs().find((s) => s.name === "mcp_fx_add")).toEqual({
      name: "mcp_fx_add",
      description: "Adds two numbers.",
      parameters: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false,
      },
    });
    expect(parametersSchema(toolOf(t.hub, "mcp_fx_echo"))).toMatchObject({ required: ["text"] });
  });

  it("skips tools whose schema is not a valid object schema, or whose name is too long, with a warning naming server and tool", () => {
    const names = report.tools.map((tool) => tool.name);
    expect(names.some((n) => n.includes("bad") || n.includes("not_object") || n.includes("xxx"))).toBe(false);
    const fx = report.warnings.filter((w) => w.startsWith('MCP server "fx"'));
    expect(fx).toEqual([
      expect.stringMatching(/^MCP server "fx": tool "bad\.schema" skipped: its inputSchema is not a valid JSON Schema: .*properties\/x\/type/),
      'MCP server "fx": tool "not_object" skipped: its inputSchema does not have type "object" at the top',
      `MCP server "fx": tool "${"x".repeat(70)}" skipped: its name would be "mcp_fx_${"x".repeat(70)}", longer than 64 characters`,
    ]);
  });

  it("a call returns the server's text exactly, for the model only", async () => {
    expect(await run("mcp_fx_echo", { text: "hi there" })).toEqual({ forLLM: "echo: hi there", silent: false, isError: false });
    expect((await run("mcp_fx_add", { a: 2, b: 3.5 })).forLLM).toBe("5.5");
  });

  it("an isError answer becomes an error result with the server's text", async () => {
    expect(await run("mcp_fx_fail")).toEqual({ forLLM: "it went wrong", silent: false, isError: true });
  });

  it("describes images and resources briefly instead of dropping them", async () => {
    expect((await run("mcp_fx_picture")).forLLM).toBe(
      ["a red dot:", "[image: image/png, 10 bytes]", "[resource <file:///notes.txt>]", "note body", "[resource link: big <file:///big.bin>]"].join("\n"),
    );
  });

  it("refuses arguments that break the tool's schema before calling the server", async () => {
    expect(await run("mcp_quick_add", { a: "2", c: 1 })).toEqual({
      forLLM: 'invalid arguments for tool "mcp_quick_add": b: required; unknown key "c"; a: must be number',
      silent: false,
      isError: true,
    });
    expect((await run("mcp_quick_echo", [])).forLLM).toBe('invalid arguments for tool "mcp_quick_echo": must be object');
    expect((await run("mcp_quick_calls")).forLLM).toBe('["calls"]');
  });

  it("starts each stdio server in its cwd (relative to the config folder) with the gateway's env under its own", async () => {
    const fx = JSON.parse((await run("mcp_fx_whoami")).forLLM) as { cwd: string; hello: string };
    const quick = JSON.parse((await run("mcp_quick_whoami")).forLLM) as { cwd: string; hello: string };
    expect(fx).toMatchObject({ cwd: realpathSync(base), hello: "from the gateway" });
    expect(quick).toMatchObject({ cwd: realpathSync(path.join(base, "sub")), hello: "from the server's env" });
  });

  it("a call past the server's timeout_ms ends with an error result (the tool set's limit) and is cancelled at the server", async () => {
    expect(toolOf(t.hub, "mcp_quick_slow").timeoutMs).toBe(250);
    expect(toolOf(t.hub, "mcp_fx_slow").timeoutMs).toBe(60_000);
    const result = await run("mcp_quick_slow");
    expect(result.isError).toBe(true);
    expect(result.forLLM).toBe('tool "mcp_quick_slow" did not finish within 250 ms (tools.mcp.servers.quick.timeout_ms); try again or do without it');
    await eventually(() => expect(t.logger.lines).toContainEqual({ level: "info", message: 'MCP server "quick" says: slow was cancelled' }));
  });

  it("without a tool set, the server's timeout_ms still bounds the call", async () => {
    const result = await toolOf(t.hub, "mcp_quick_slow").execute({ ms: 60_000 }, toolContext());
    expect(result).toEqual({
      forLLM: 'MCP server "quick" did not answer "slow" within 250 ms (tools.mcp.servers.quick.timeout_ms)',
      silent: false,
      isError: true,
    });
  });

  it("aborting the call's signal ends it at once with the abort, and cancels it at the server", async () => {
    const stop = new AbortController();
    const call = run("mcp_fx_slow", {}, stop.signal);
    await eventually(() => expect(t.logger.lines).toContainEqual({ level: "info", message: 'MCP server "fx" says: slow started' }));
    stop.abort(new AbortedError("stopped by the test"));
    await expect(call).rejects.toThrow("stopped by the test");
    await eventually(() => expect(t.logger.lines).toContainEqual({ level: "info", message: 'MCP server "fx" says: slow was cancelled' }));
    expect((await run("mcp_fx_echo", { text: "still here" })).forLLM).toBe("echo: still here");
  });
});

describe("MCP tool names", () => {
  it("when two servers' tools get the same name, the server that listed it first keeps it and the other is warned about, naming both", async () => {
    const t = testHub({ a_b: fixtureServer(), a: fixtureServer({ env: { FIXTURE_PREFIX: "b_" } }) });
    onTestFinished(() => t.hub.close());
    const report = await t.hub.start();
    // Each server's tools arrive as it lists them (none waits for another): which came first decides.
    const keeper = t.hub.origin("mcp_a_b_echo");
    expect(["a_b", "a"]).toContain(keeper);
    const other = keeper === "a" ? "a_b" : "a";
    expect(report.tools.filter((tool) => tool.name === "mcp_a_b_echo").map((tool) => t.hub.origin(tool.name))).toEqual([keeper]);
    const [lost, kept] = other === "a" ? ['"b_echo"', '"echo"'] : ['"echo"', '"b_echo"'];
    expect(report.warnings).toContain(
      `MCP server "${other}": tool ${lost} skipped: its name would be "mcp_a_b_echo", like tool ${kept} of MCP server "${keeper}"`,
    );
    expect(await set(report.tools).execute(toolCall("mcp_a_b_echo", { text: "mine" }), toolContext())).toMatchObject({ forLLM: "echo: mine" });
  });
});
