import { type Server, createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import type { McpServerConfig } from "../../src/features/mcp/config.js";
import type { McpHubOptions } from "../../src/features/mcp/index.js";
import { ToolSet } from "../../src/tools/tool-set.js";
import { fixtureServer, testHub, toolCall, toolContext } from "../support/mcp.js";
import { listenForTest } from "../support/listen.js";

/**
 * tools.mcp.max_message_bytes (default 8 MiB): an MCP server's answer over
 * it fails that call alone, with a message that says why; the server stays
 * connected for every other call and session. Real server processes (stdio)
 * and real HTTP servers (streamable HTTP, streamed and JSON answers).
 */

const MB = 1_000_000;

async function started(servers: Record<string, McpServerConfig>, opts: McpHubOptions = {}) {
  const t = testHub(servers, opts);
  onTestFinished(() => t.hub.close());
  const report = await t.hub.start();
  expect(report.warnings.filter((w) => !w.includes("skipped"))).toEqual([]);
  const tools = new ToolSet(report.tools);
  const run = (name: string, args: unknown = {}, id = "c1", signal?: AbortSignal) => tools.execute(toolCall(name, args, id), toolContext(signal));
  return { ...t, run };
}

describe("MCP answers over the message limit (stdio)", () => {
  it("a 20 MB answer fails that call with a clear message; the next call on the same server process works", async () => {
    const { hub, sleep, run } = await started({ fx: fixtureServer() });
    const pid = JSON.parse((await run("mcp_fx_whoami")).forLLM).pid;

    const big = await run("mcp_fx_big", { bytes: 20 * MB });
    expect(big.isError).toBe(true);
    expect(big.forLLM).toMatch(
      /^MCP server "fx" answered "big" with 19\.1 MiB, more than the 8 MiB one message may hold \(tools\.mcp\.max_message_bytes\), so the answer was dropped; ask for less at once/,
    );

    expect((await run("mcp_fx_echo", { text: "still here" })).forLLM).toBe("echo: still here");
    expect(JSON.parse((await run("mcp_fx_whoami")).forLLM).pid).toBe(pid);
    expect(hub.status().fx!.state).toBe("up");
    expect(sleep.waits).toEqual([]);
  });

  it("an answer within the message limit is cut to the result cap, with the note", async () => {
    const { run } = await started({ fx: fixtureServer() });
    const result = await run("mcp_fx_big", { bytes: MB });
    expect(result.isError).toBe(false);
    expect(result.forLLM).toBe(`${"z".repeat(64 * 1024)}\n[... cut: the result was 976.6 KiB; the first 64 KiB are kept]`);
  });

  it("tools.mcp.max_message_bytes sets the limit, and a big answer among calls in flight fails only itself", async () => {
    const { run } = await started({ fx: fixtureServer() }, { maxMessageBytes: 100_000 });
    const [small, big, after] = await Promise.all([
      run("mcp_fx_echo", { text: "a" }, "c1"),
      run("mcp_fx_big", { bytes: 200_000 }, "c2"),
      run("mcp_fx_add", { a: 1, b: 2 }, "c3"),
    ]);
    expect(small.forLLM).toBe("echo: a");
    expect(big.forLLM).toMatch(/^MCP server "fx" answered "big" with 195\.4 KiB, more than the 97\.7 KiB one message may hold/);
    expect(after.forLLM).toBe("3");
  });

  it("fifty calls in flight on one server all answer, and Node prints no warning", async () => {
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on("warning", listener);
    onTestFinished(() => void process.off("warning", listener));
    const { run } = await started({ fx: fixtureServer() });
    const turn = new AbortController();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => run("mcp_fx_echo", { text: `n${i}` }, `c${i}`, turn.signal)));
    expect(results.map((r) => r.forLLM)).toEqual(Array.from({ length: 50 }, (_, i) => `echo: n${i}`));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(warnings).toEqual([]);
  });
});

/** A stateless streamable-HTTP MCP server with a `big` tool; `json` answers in one JSON body instead of SSE. */
function httpServer(json: boolean): Server {
  return createServer((req, res) => {
    const mcp = new McpServer({ name: "big-http", version: "1.0.0" });
    mcp.registerTool("big", { description: "Answers with `bytes` bytes.", inputSchema: { bytes: z.number() } }, ({ bytes }) => ({
      content: [{ type: "text", text: "z".repeat(bytes) }],
    }));
    mcp.registerTool("echo", { description: "Says it back.", inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: "text", text: `echo: ${text}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
    res.on("close", () => void mcp.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
}

describe.each([
  ["streamed (SSE)", false],
  ["one JSON body", true],
])("MCP answers over the message limit (streamable HTTP, %s)", (_, json) => {
  it("a 20 MB answer fails that call with a clear message; the next call works without reconnecting", async () => {
    const server = httpServer(json);
    const { hub, sleep, run } = await started({ web: { url: `${await listenForTest(server)}/mcp` } });
    const big = await run("mcp_web_big", { bytes: 20 * MB });
    expect(big.isError).toBe(true);
    expect(big.forLLM).toMatch(
      /^MCP server "web" answered "big" with (19\.1 MiB, )?more than the 8 MiB one message may hold \(tools\.mcp\.max_message_bytes\)/,
    );
    expect((await run("mcp_web_echo", { text: "fine" })).forLLM).toBe("echo: fine");
    expect(hub.status().web!.state).toBe("up");
    expect(sleep.waits).toEqual([]);
  });
});
