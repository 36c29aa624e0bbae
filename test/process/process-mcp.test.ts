import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { tempDir, writeProject } from "../support/project.js";
import { waitFor, within } from "../support/wait.js";

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
  it("a port in use fails start-up and leaves no MCP server running, even a stubborn one", { timeout: 60_000 }, async () => {
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
    const pid = await pidFrom(pidfile, gw.child);
    expect(await within("the gateway to exit on the port in use", gw.exited)).toBe(1);
    expect(gw.output()).toContain("the port is in use");
    expect(alive(pid)).toBe(false);
  });

  it("SIGTERM while an MCP server is still starting stops cleanly: exit 0, no server left", { timeout: 60_000 }, async () => {
    const pidfile = path.join(tempDir(), "pid");
    const dir = writeProject({
      config: {
        gateway: { port: 0 },
        tools: { mcp: { servers: { slow: { command: process.execPath, args: [serverScript], env: { FIXTURE_PIDFILE: pidfile, FIXTURE_SILENT: "1" } } } } },
      },
    });
    const gw = gateway(dir);
    const pid = await pidFrom(pidfile, gw.child);
    gw.child.kill("SIGTERM");
    expect(await within("the gateway to exit on SIGTERM", gw.exited), gw.output()).toBe(0);
    expect(gw.output()).not.toContain("listening on");
    expect(alive(pid)).toBe(false);
  });
});
