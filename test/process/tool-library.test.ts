/**
 * The web tool library on the real gateway process (`node dist/main.js
 * gateway`) and with a real MCP server: a switch is written to the config
 * file, offered to the model from the next turn (the scripted fake model
 * records the tools each request carried), still there after a restart;
 * a tool an environment variable switches is refused, naming it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../support/browser.js";
import type { RecordedRequest } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, pluggedHarness, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";

const model = useScriptedModel();
const offered = (request: RecordedRequest) => (request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name) as string[];
const serverScript = path.resolve(import.meta.dirname, "..", "fixtures", "mcp-server.mjs");

const running: GatewayProcess[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.stop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function start(project: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const gateway = await startGatewayProcess(project, env);
  running.push(gateway);
  return gateway;
}

async function stop(gateway: GatewayProcess): Promise<void> {
  running.splice(running.indexOf(gateway), 1);
  expect(await gateway.stop()).toBe(0);
}

const putState = (url: string, name: string, enabled: boolean) =>
  fetch(`${url}/v1/tools/${name}/state`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ enabled }) });

/** One turn, and the tools the model was offered in its first request. */
async function toolsOfNextTurn(url: string): Promise<string[]> {
  const before = model.server.requests.length;
  const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "SAY hi" }) });
  expect(res.status).toBe(200);
  return offered(model.server.requests[before]!);
}

function project(): string {
  const dir = writeProject(
    { config: { ...openaiConfig(model.server.url), tools: { todo: { enabled: false } } } },
    mkdtempSync(path.join(tmpdir(), "picoclaw-tools-")),
  );
  folders.push(dir);
  return dir;
}

describe("the tool library on the gateway process", () => {
  it("PUT todo on: the next turn offers todo, the file says so, and after a restart it is still on", async () => {
    const dir = project();
    let gateway = await start(dir);
    expect(await toolsOfNextTurn(gateway.url)).not.toContain("todo");

    const res = await putState(gateway.url, "todo", true);
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).tool).toMatchObject({ name: "todo", enabled: true, source: "config", agents: ["main"] });
    expect(await toolsOfNextTurn(gateway.url)).toContain("todo");
    expect(JSON.parse(readFileSync(path.join(dir, "picoclaw.config.json"), "utf8")).tools.todo).toEqual({ enabled: true });

    await stop(gateway);
    gateway = await start(dir);
    const listed = (await jsonOf(await fetch(`${gateway.url}/v1/tools`))).tools.find((tool: { name: string }) => tool.name === "todo");
    expect(listed).toMatchObject({ enabled: true, source: "config" });
    expect(await toolsOfNextTurn(gateway.url)).toContain("todo");
  });

  it("with PICOCLAW_TOOLS_TODO_ENABLED=false a switch is refused with 409 naming the variable, and the file is unchanged", async () => {
    const dir = project();
    const before = readFileSync(path.join(dir, "picoclaw.config.json"), "utf8");
    const gateway = await start(dir, { PICOCLAW_TOOLS_TODO_ENABLED: "false" });
    const res = await putState(gateway.url, "todo", true);
    expect(res.status).toBe(409);
    const { error } = await jsonOf(res);
    expect(error.code).toBe("tool_locked");
    expect(error.message).toContain("PICOCLAW_TOOLS_TODO_ENABLED");
    expect(readFileSync(path.join(dir, "picoclaw.config.json"), "utf8")).toBe(before);
    expect(await toolsOfNextTurn(gateway.url)).not.toContain("todo");
  });
});

describe("the tool library with an MCP server's tools", () => {
  it("switches an MCP tool off and on for the next turn, and lists it with its server", async () => {
    const h = await pluggedHarness({
      config: { ...openaiConfig(model.server.url), tools: { mcp: { servers: { fx: { command: process.execPath, args: [serverScript], timeout_ms: 5000 } } } } },
    });
    const listed = (await jsonOf(await h.request("/v1/tools"))).tools.find((tool: { name: string }) => tool.name === "mcp_fx_add");
    expect(listed).toMatchObject({ origin: "mcp server fx", enabled: true, source: "default", agents: ["main"] });

    const off = await h.request("/v1/tools/mcp_fx_add/state", { method: "PUT", headers: { "content-type": "application/json" }, body: '{"enabled":false}' });
    expect(off.status).toBe(200);
    expect(JSON.parse(readFileSync(path.join(h.dir, "picoclaw.config.json"), "utf8")).tools.mcp_fx_add).toEqual({ enabled: false });
    await h.chat({ message: "SAY one" });
    expect(offered(model.server.requests.at(-1)!)).not.toContain("mcp_fx_add");
    // A subagent's turn follows too.
    await h.chat({ message: call("subagent", { task: "SAY from the child" }) });
    // The child's request is the one whose user message is the task itself (the parent's carries the CALL line).
    const child = model.server.requests.find((request) =>
      (request.body.messages as { role: string; content: string }[]).some(
        (m) => m.role === "user" && m.content.includes("SAY from the child") && !m.content.includes("CALL subagent"),
      ),
    );
    expect(child).toBeDefined();
    expect(offered(child!)).toContain("subagent");
    expect(offered(child!)).not.toContain("mcp_fx_add");

    await h.request("/v1/tools/mcp_fx_add/state", { method: "PUT", headers: { "content-type": "application/json" }, body: '{"enabled":true}' });
    const { json } = await h.chat({ message: call("mcp_fx_add", { a: 2, b: 40 }) });
    expect(json.reply).toBe("done: 42");
    await h.runtime.close(0);
  });
});
