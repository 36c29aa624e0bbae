import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { tempDir, writeProject } from "../support/project.js";
import { eventually, waitFor, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const main = path.join(root, "dist", "main.js");
const serverScript = path.join(root, "test", "fixtures", "mcp-server.mjs");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function pidFrom(file: string, gateway: { exitCode: number | null }): Promise<number> {
  await waitFor("the MCP server to write its pid file", () => {
    if (gateway.exitCode !== null) throw new Error(`the gateway exited (${gateway.exitCode}) before the MCP server started`);
    return existsSync(file) && readFileSync(file, "utf8") !== "";
  });
  const pid = Number(readFileSync(file, "utf8"));
  // Whatever the test's outcome, no server it started may outlive it.
  onTestFinished(() => {
    if (alive(pid)) process.kill(pid, "SIGKILL");
  });
  return pid;
}

function gateway(cwd: string) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("PICOCLAW_")) delete env[key];
  const child = spawn(process.execPath, [main, "gateway"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c));
  child.stderr.on("data", (c: Buffer) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  onTestFinished(() => void child.kill("SIGKILL"));
  return { child, exited, output: () => output };
}

describe("the gateway process with MCP servers (needs dist/, built by npm test)", () => {
  it("a silent MCP server does not delay listening: the gateway answers /health and a turn while it is still connecting, and another server's tools arrive meanwhile", {
    timeout: 60_000,
  }, async () => {
    const pidfile = path.join(tempDir(), "pid");
    const dir = writeProject({
      config: {
        gateway: { port: 0 },
        tools: {
          mcp: {
            servers: {
              silent: { command: process.execPath, args: [serverScript], env: { FIXTURE_PIDFILE: pidfile, FIXTURE_SILENT: "1" } },
              fx: { command: process.execPath, args: [serverScript] },
            },
          },
        },
      },
    });
    const gw = gateway(dir);
    await waitFor("the gateway's listening line", () => /listening on (http:\/\/\S+)/.test(gw.output()), { instead: () => gw.output() });
    const url = /listening on (http:\/\/\S+)/.exec(gw.output())![1]!;
    // The silent server is started after the gateway listens, and never answers: it is still connecting (its start allows 30 s).
    const pid = await pidFrom(pidfile, gw.child);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const chat = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: "hi" }) });
    expect(chat.status).toBe(200);
    // The other server's tools came as soon as it listed them; the silent one's never did.
    await eventually(async () => {
      const { agents } = (await (await fetch(`${url}/v1/agents`)).json()) as { agents: { id: string; tools: string[] }[] };
      const tools = agents.find((a) => a.id === "main")!.tools;
      expect(tools).toContain("mcp_fx_add");
      expect(tools.filter((name) => name.startsWith("mcp_silent_"))).toEqual([]);
    });
    expect(gw.output()).not.toMatch(/"silent" did not start/);
    // SIGTERM while it is still connecting: exit 0, and no server left running.
    gw.child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", gw.exited), gw.output()).toBe(0);
    expect(alive(pid)).toBe(false);
  });

  it("a port in use fails start-up before any MCP server is started", { timeout: 60_000 }, async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => void busy.close());
    const port = (busy.address() as { port: number }).port;
    const pidfile = path.join(tempDir(), "pid");
    const dir = writeProject({
      config: {
        gateway: { port },
        tools: { mcp: { servers: { fx: { command: process.execPath, args: [serverScript], env: { FIXTURE_PIDFILE: pidfile, FIXTURE_STUBBORN: "1" } } } } },
      },
    });
    const gw = gateway(dir);
    expect(await within("the gateway to exit on the port in use", gw.exited)).toBe(1);
    expect(gw.output()).toContain("the port is in use");
    expect(existsSync(pidfile)).toBe(false);
  });

  /** A project whose one MCP server would write `marker` the moment it ran. */
  function markedProject() {
    const marker = path.join(tempDir(), "marker");
    const dir = writeProject({
      config: { tools: { mcp: { servers: { marked: { command: process.execPath, args: [serverScript], env: { FIXTURE_PIDFILE: marker } } } } } },
    });
    return { dir, marker };
  }

  it("config check does not spawn MCP servers", { timeout: 60_000 }, async () => {
    const { dir, marker } = markedProject();
    const check = picoclawProcess(["config", "check"], dir);
    expect(await within("config check to exit", check.exited), check.output()).toBe(0);
    expect(check.output()).toContain("config OK");
    expect(check.output()).toContain('"marked"');
    expect(existsSync(marker)).toBe(false);
  });

  it("agents does not spawn MCP servers: it describes them from the config", { timeout: 60_000 }, async () => {
    const { dir, marker } = markedProject();
    const agents = picoclawProcess(["agents"], dir);
    expect(await within("picoclaw agents to exit", agents.exited), agents.output()).toBe(0);
    expect(agents.output()).toMatch(/MCP SERVER\s+TOOLS\s+RUNS\n\s*marked\s+mcp_marked_\*\s+\S+node\S* \S+mcp-server\.mjs/);
    expect(agents.output()).toContain("MCP servers are not started here");
    expect(existsSync(marker)).toBe(false);
  });
});
