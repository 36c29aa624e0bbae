import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ToolSet } from "../../src/tools/tool-set.js";
import { testHub, toolCall, toolContext } from "../support/mcp.js";
import { eventually } from "../support/wait.js";

/**
 * A stateless MCP server over streamable HTTP, built with the SDK's
 * high-level API (zod schemas): every request gets a fresh server.
 */
function httpMcpServer(): Server {
  return createServer((req, res) => {
    const mcp = new McpServer({ name: "http-fixture", version: "1.0.0" });
    mcp.registerTool("greet", { description: "Greets someone, and tells which token it was sent.", inputSchema: { name: z.string() } }, ({ name }) => ({
      content: [{ type: "text", text: `hello ${name} (token ${String(req.headers["x-token"])})` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void mcp.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
}

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve) => server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

describe("MCP servers over streamable HTTP", () => {
  it("lists and calls a URL server's tools with the configured headers, and reconnects after it was unreachable", async () => {
    let server = httpMcpServer();
    const port = await listen(server);
    onTestFinished(() => stop(server));
    const { hub, sleep } = testHub({ web: { url: `http://127.0.0.1:${port}/mcp`, headers: { "X-Token": "t0k" } } });
    onTestFinished(() => hub.close());

    const report = await hub.start();
    expect(report.warnings).toEqual([]);
    const set = new ToolSet(report.tools);
    expect(set.specs()).toEqual([
      {
        name: "mcp_web_greet",
        description: "Greets someone, and tells which token it was sent.",
        parameters: expect.objectContaining({ type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
      },
    ]);
    const greet = () => set.execute(toolCall("mcp_web_greet", { name: "Ada" }), toolContext());
    expect(await greet()).toEqual({ forLLM: "hello Ada (token t0k)", silent: false, isError: false });

    await stop(server);
    const failed = await greet();
    expect(failed.isError).toBe(true);
    expect(failed.forLLM).toMatch(/^MCP server "web" could not be reached \(.+\); it is being reconnected; try again shortly$/);
    await sleep.began(1);
    expect(hub.status().web!.state).toBe("restarting");
    expect((await greet()).forLLM).toMatch(/^MCP server "web" is restarting \(the connection failed: .+\); try again shortly$/);

    server = httpMcpServer();
    await listen(server, port);
    sleep.release();
    await eventually(() => expect(hub.status().web!.state).toBe("up"));
    expect((await greet()).forLLM).toBe("hello Ada (token t0k)");
  });
});
