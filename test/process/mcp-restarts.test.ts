import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { McpHub, McpToolsChange } from "../../src/features/mcp/index.js";
import { ToolSet } from "../../src/tools/tool-set.js";
import { FIXTURE_SERVER, type TestHub, alive, fixtureServer, testHub, toolCall, toolContext } from "../support/mcp.js";
import { tempDir } from "../support/project.js";
import { eventually, within } from "../support/wait.js";

function started(servers: Parameters<typeof testHub>[0]): TestHub {
  const t = testHub(servers);
  onTestFinished(() => t.hub.close());
  return t;
}

function runner(hub: McpHub) {
  return async (name: string, args: unknown = {}) => {
    const tool = hub.tools().find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return new ToolSet([tool]).execute(toolCall(name, args), toolContext());
  };
}

const pidOf = async (run: ReturnType<typeof runner>, tool: string) => (JSON.parse((await run(tool)).forLLM) as { pid: number }).pid;

const restarting = (server: string, reason: string) => ({
  forLLM: `MCP server "${server}" is restarting (${reason}); try again shortly`,
  silent: false,
  isError: true,
});

describe("MCP server restarts", () => {
  it("a killed server's tools answer that it is restarting, then work again once it is back", async () => {
    const { hub, sleep, logger } = started({ fx: fixtureServer() });
    await hub.start();
    const run = runner(hub);
    const first = await pidOf(run, "mcp_fx_whoami");

    process.kill(first, "SIGKILL");
    await sleep.began(1);
    expect(hub.status().fx).toMatchObject({ state: "restarting", reason: "it was killed by SIGKILL" });
    expect(await run("mcp_fx_echo", { text: "anyone?" })).toEqual(restarting("fx", "it was killed by SIGKILL"));
    expect(logger.lines).toContainEqual({ level: "warn", message: 'MCP server "fx" is down (it was killed by SIGKILL); restarting in 375 ms' });

    sleep.release();
    await eventually(() => expect(hub.status().fx!.state).toBe("up"));
    const second = await pidOf(run, "mcp_fx_whoami");
    expect(second).not.toBe(first);
    expect(alive(first)).toBe(false);
    expect((await run("mcp_fx_echo", { text: "back" })).forLLM).toBe("echo: back");
  });

  it("a server that exits during a call answers that call with an error, and restarts with a longer wait", async () => {
    const { hub, sleep } = started({ fx: fixtureServer() });
    await hub.start();
    const run = runner(hub);
    const crashes = async (round: number) => {
      expect(await run("mcp_fx_crash")).toEqual({
        forLLM: 'MCP server "fx" stopped during the call (it exited with code 3: crashing on purpose); try again shortly',
        silent: false,
        isError: true,
      });
      await sleep.began(round);
      expect(await run("mcp_fx_add", { a: 1, b: 1 })).toEqual(restarting("fx", "it exited with code 3: crashing on purpose"));
      sleep.release();
      await eventually(() => expect(hub.status().fx!.state).toBe("up"));
      expect((await run("mcp_fx_add", { a: 1, b: round })).forLLM).toBe(String(1 + round));
    };
    await crashes(1);
    await crashes(2);
    // Backoff doubles while the server keeps failing soon after starting (jitter fixed at the middle).
    expect(sleep.waits).toEqual([375, 750]);
  });

  it("a server that fails to start is a warning, is retried in the background, and announces its tools when it is up", async () => {
    const gate = path.join(tempDir(), "gate");
    const { hub, sleep } = started({ gated: fixtureServer({ env: { FIXTURE_GATE: gate } }) });
    const report = await hub.start();
    expect(report).toEqual({
      tools: [],
      warnings: [`MCP server "gated" did not start (it exited with code 1: gate ${gate} is closed); it is retried in the background`],
    });
    const changes: McpToolsChange[] = [];
    hub.onToolsChanged((change) => changes.push(change));

    await sleep.began(1);
    sleep.release();
    await sleep.began(2); // the first retry failed too
    expect(hub.status().gated).toEqual({ state: "restarting", reason: `it exited with code 1: gate ${gate} is closed`, tools: [] });
    writeFileSync(gate, "open");
    sleep.release();

    await eventually(() => expect(changes).toHaveLength(1));
    const [change] = changes;
    expect(change).toMatchObject({ server: "gated", removed: [], changed: [] });
    expect(change!.warnings).toHaveLength(3); // the fixture's odd tools, skipped
    expect(change!.added.map((t) => t.name)).toContain("mcp_gated_echo");
    expect(hub.tools()).toEqual(change!.added);
    expect((await runner(hub)("mcp_gated_echo", { text: "finally" })).forLLM).toBe("echo: finally");
    expect(sleep.waits).toEqual([375, 750]);
  });

  it("a command that cannot run, or a URL nobody answers, is a start-up warning that says so", async () => {
    const closed = createServer();
    const port = await new Promise<number>((resolve) => closed.listen(0, "127.0.0.1", () => resolve((closed.address() as AddressInfo).port)));
    await new Promise((resolve) => closed.close(resolve));
    const { hub } = started({ missing: { command: "/nonexistent/picoclaw-mcp" }, web: { url: `http://127.0.0.1:${port}/mcp` } });
    const report = await hub.start();
    expect(report.warnings).toEqual([
      'MCP server "missing" did not start (it could not be started: spawn /nonexistent/picoclaw-mcp ENOENT); it is retried in the background',
      expect.stringMatching(/^MCP server "web" did not start \(it could not be reached: fetch failed \(.*ECONNREFUSED.*\)\); it is retried in the background$/),
    ]);
  });

  it("tools a server adds are announced; tools it no longer offers stay registered and answer an error", async () => {
    const { hub, sleep } = started({ fx: fixtureServer() });
    await hub.start();
    const run = runner(hub);
    const changes: McpToolsChange[] = [];
    hub.onToolsChanged((change) => changes.push(change));

    expect((await run("mcp_fx_grow")).forLLM).toBe("grown");
    await eventually(() => expect(changes).toHaveLength(1));
    expect(changes[0]).toMatchObject({ server: "fx", removed: [], changed: [] });
    expect(changes[0]!.added.map((t) => t.name)).toEqual(["mcp_fx_extra"]);
    expect((await run("mcp_fx_extra")).forLLM).toBe("extra ran");

    // The restarted server has forgotten `extra`.
    process.kill(await pidOf(run, "mcp_fx_whoami"), "SIGKILL");
    await sleep.began(1);
    sleep.release();
    await eventually(() => expect(changes).toHaveLength(2));
    expect(changes[1]).toMatchObject({ server: "fx", added: [], removed: ["mcp_fx_extra"], changed: [] });
    expect(await run("mcp_fx_extra")).toEqual({
      forLLM: 'MCP server "fx" no longer offers the tool "extra"; do without it',
      silent: false,
      isError: true,
    });
    expect(hub.status().fx!.tools).not.toContain("mcp_fx_extra");
    expect(hub.origin("mcp_fx_extra")).toBe("fx");
  });
});

describe("closing MCP servers", () => {
  it("close() ends every server process, an unfinished call and every pending restart", async () => {
    const { hub, sleep } = started({
      a: fixtureServer(),
      b: fixtureServer(),
      never: fixtureServer({ env: { FIXTURE_GATE: path.join(tempDir(), "missing") } }),
    });
    await hub.start();
    const run = runner(hub);
    const pids = [await pidOf(run, "mcp_a_whoami"), await pidOf(run, "mcp_b_whoami")];
    await sleep.began(1); // "never" waits to retry
    const slow = run("mcp_a_slow");

    await hub.close();
    expect(pids.filter(alive)).toEqual([]);
    expect(await slow).toEqual({ forLLM: 'MCP server "a" is stopped (the gateway is shutting down)', silent: false, isError: true });
    expect(Object.values(hub.status()).map((s) => s.state)).toEqual(["closed", "closed", "closed"]);
    expect((await run("mcp_b_echo", { text: "x" })).forLLM).toBe('MCP server "b" is stopped (the gateway is shutting down)');
    await hub.close();
  });

  it("a process whose hub waits to restart a server exits by itself once the hub is closed (no timer or child left)", async () => {
    const script = path.join(import.meta.dirname, "..", "fixtures", "mcp-hub-close.ts");
    const child = spawn(process.execPath, ["--import", "tsx", script, FIXTURE_SERVER], { stdio: ["ignore", "pipe", "pipe"] });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // Its restart backoff is ten minutes: if close() left the timer (or a server) behind, this would not end.
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const code = await within("the script to exit once its hub is closed", exited, { instead: () => `its output so far: ${output}` });
    expect({ code, output }).toEqual({ code: 0, output: "closed with 11 tools; did not start: down\n" });
  });
});
