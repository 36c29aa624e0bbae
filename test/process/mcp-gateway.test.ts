import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import type { RecordedRequest } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, pluggedHarness, recordingLogger, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();
const serverScript = path.resolve(import.meta.dirname, "..", "fixtures", "mcp-server.mjs");
const fixture = { command: process.execPath, args: [serverScript], timeout_ms: 5000 };
const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name) as string[];

describe("MCP tools through the gateway", () => {
  it("are listed, shown to the model with the server's schema, and called", async () => {
    const h = await pluggedHarness({
      agents: { main: "---\nname: Main\n---\nYou use tools.", narrow: "---\nname: Narrow\ntools: [mcp_fx_add]\n---\nOnly adds." },
      config: { ...openaiConfig(model.server.url), tools: { mcp: { servers: { fx: fixture } }, mcp_fx_crash: { enabled: false } } },
    });
    const agents = await jsonOf(await h.request("/v1/agents"));
    const main = agents.agents.find((a: { id: string }) => a.id === "main");
    expect(main.tools).toEqual(expect.arrayContaining(["mcp_fx_add", "mcp_fx_echo", "mcp_fx_slow"]));
    expect(main.tools).not.toContain("mcp_fx_crash");
    expect(agents.agents.find((a: { id: string }) => a.id === "narrow").tools).toEqual(["mcp_fx_add"]);
    expect(h.warnings.join("\n")).toMatch(/bad\.schema/);

    const { json } = await h.chat({ message: [call("mcp_fx_add", { a: 2, b: 40 }), call("mcp_fx_echo", { text: 7 })].join("\n") });
    const [sum, bad] = json.reply.replace(/^done: /, "").split(" | ");
    expect(sum).toBe("42");
    expect(bad).toMatch(/^invalid arguments for tool "mcp_fx_echo"/);
    const add = model.server.requests.at(-3)!.body.tools.find((t: { function: { name: string } }) => t.function.name === "mcp_fx_add");
    expect(add.function.parameters).toMatchObject({ type: "object", required: expect.arrayContaining(["a", "b"]) });

    await h.chat({ message: call("mcp_fx_echo", { text: "x" }), agent: "narrow" });
    expect(toolNames(model.server.requests.at(-2)!)).toEqual(["mcp_fx_add"]);
    await h.runtime.close(0);
  });

  it("a call past tools.<name>.timeout_ms is an error result and the turn goes on", async () => {
    const h = await pluggedHarness({
      config: { ...openaiConfig(model.server.url), tools: { mcp: { servers: { fx: fixture } }, mcp_fx_slow: { timeout_ms: 100 } } },
    });
    const { status, json } = await h.chat({ message: [call("mcp_fx_slow", { ms: 30000 }), "SAY carried on"].join("\n") });
    expect(status).toBe(200);
    expect(json.reply).toBe("carried on");
    const result = (model.server.requests.at(-1)!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").at(-1)!;
    expect(result.content).toMatch(/did not finish within 100 ms|timed out/);
    await h.runtime.close(0);
  });

  it("a server that cannot start is a warning that says why, not Node's version banner", async () => {
    const h = await pluggedHarness({ config: { tools: { mcp: { servers: { gone: { command: process.execPath, args: ["./no-such-server.js"] } } } } } });
    const warning = h.warnings.find((w) => w.includes('"gone"'));
    expect(warning).toMatch(/Error: Cannot find module .*no-such-server\.js/);
    await h.runtime.close(0);
  });

  it("a server whose cwd does not exist says so, instead of blaming its command", async () => {
    const h = await pluggedHarness({ config: { tools: { mcp: { servers: { lost: { command: process.execPath, args: [serverScript], cwd: "nope" } } } } } });
    expect(h.warnings.find((w) => w.includes('"lost"'))).toMatch(/its cwd .*nope does not exist/);
    await h.runtime.close(0);
  });

  it("picoclaw agent -m starts the MCP servers before its one turn: the turn calls their tool", async () => {
    const dir = writeProject({ config: { ...openaiConfig(model.server.url), tools: { mcp: { servers: { fx: fixture } } } } });
    const out: string[] = [];
    const argv = ["agent", "-m", call("mcp_fx_add", { a: 2, b: 40 })];
    const code = await runCli({ argv, env: {}, cwd: dir, stdout: (t) => out.push(t), stderr: () => {}, logger: recordingLogger() });
    expect(code).toBe(0);
    expect(out.join("\n")).toBe("done: 42");
  });

  it("picoclaw agents names each configured server and the names its tools will have, without starting it", async () => {
    const dir = writeProject({ config: { tools: { mcp: { servers: { fx: fixture } } } } });
    const out: string[] = [];
    const code = await runCli({ argv: ["agents"], env: {}, cwd: dir, stdout: (t) => out.push(t), stderr: () => {}, logger: recordingLogger() });
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(/fx\s+mcp_fx_\*\s+\S*node\S* \S*mcp-server\.mjs/);
    expect(out.join("\n")).not.toContain("mcp_fx_add");
  });
});
