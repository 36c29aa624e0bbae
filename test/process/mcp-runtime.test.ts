import path from "node:path";
import { writeFileSync } from "node:fs";
import { describe, expect, it, onTestFinished } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { mcpServersFeature } from "../../src/features/mcp/feature.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { fixtureServer, testHub } from "../support/mcp.js";
import { tempDir } from "../support/project.js";
import { eventually } from "../support/wait.js";

const configSchema = builtinConfigSchema();

const NO_SUBAGENTS = { subagent: { enabled: false }, spawn: { enabled: false }, delegate: { enabled: false } };

describe("MCP tools in the runtime", () => {
  it("a turn calls an MCP tool like any other; config, allowlists and late tools go through the one policy", async () => {
    const gate = path.join(tempDir(), "gate");
    const servers = { fx: fixtureServer(), late: fixtureServer({ env: { FIXTURE_GATE: gate } }) };
    const { hub, sleep } = testHub(servers);
    onTestFinished(() => hub.close());
    const model = new ControlledModel();
    const agents = new Map([
      ["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nHelp.").agent],
      ["picky", readAgent("picky", "agents/picky/AGENT.md", "---\ntools: [mcp_fx_add, mcp_late_echo]\n---\n").agent],
    ]);
    const runtime = new Runtime({
      config: configSchema.parse({ tools: { ...NO_SUBAGENTS, mcp_fx_crash: { enabled: false } } }),
      agents,
      models: single(model),
      features: [mcpServersFeature(servers, async () => hub)],
    });
    onTestFinished(() => runtime.close());
    const toolsOf = (agent: string) => runtime.summaries().find((s) => s.id === agent)!.tools;
    // Nothing is started before the runtime connects; then the tools of the servers that came up are there.
    expect(toolsOf("main").filter((name) => name.startsWith("mcp_"))).toEqual([]);
    expect(runtime.startupWarnings().join("\n")).not.toMatch(/mcp_fx_crash|mcp_late_echo/);
    expect((await runtime.connect()).join("\n")).toMatch(/MCP server "late" did not start/);

    const mainTools = toolsOf("main");
    expect(mainTools).toContain("mcp_fx_echo");
    expect(mainTools).not.toContain("mcp_fx_crash");
    expect(toolsOf("picky")).toEqual(["mcp_fx_add"]);

    const turn = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "say hi" });
    const [first] = await model.calls(1);
    expect(first!.request.tools.find((t) => t.name === "mcp_fx_echo")).toEqual({
      name: "mcp_fx_echo",
      description: "Says the text back.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    });
    first!.resolve({ toolCalls: [{ id: "c1", type: "function", function: { name: "mcp_fx_echo", arguments: '{"text":"hi"}' } }] });
    const [, second] = await model.calls(2);
    expect(second!.request.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c1", content: "echo: hi" });
    second!.resolve({ text: "done" });
    // The model decides what the user sees: MCP output is never delivered by itself.
    expect((await turn).delivered).toEqual([{ from: "agent", text: "done" }]);

    writeFileSync(gate, "open");
    await sleep.began(1);
    sleep.release();
    await eventually(() => expect(toolsOf("picky")).toEqual(["mcp_fx_add", "mcp_late_echo"]));
    expect(runtime.toolOverview().find((tool) => tool.name === "mcp_late_echo")?.origin).toBe("mcp server late");
  });
});
