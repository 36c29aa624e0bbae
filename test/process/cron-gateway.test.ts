/**
 * Scheduled jobs in the real gateway process, on real time: a job made
 * through the tool a few seconds out is listed by GET /v1/cron, survives a
 * kill -9 of the gateway, runs once after the restart (a turn in the
 * session that made it), and the one-shot is gone after its run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import { jsonOf, recordingLogger, writeProject } from "../support/project.js";
import { freePort } from "../support/listen.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function start(project: string, port = "0"): { child: ChildProcess; url: Promise<string>; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: port, PICOCLAW_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = new Promise<string>((resolve) =>
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    }),
  );
  return { child, url: within("the gateway to listen", url, { instead: () => output }), exited: new Promise((resolve) => child.once("exit", resolve)) };
}

const SESSION = "agent:main:http:c";
const userMessages = async (url: string) =>
  ((await jsonOf(await fetch(`${url}/v1/sessions/${SESSION}/history`))).messages as { role: string; content: string }[]).filter((m) => m.role === "user");

describe("a scheduled job in the real gateway", () => {
  it("made a few seconds out, it survives a kill -9, runs once after the restart, and the one-shot is gone", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: {} });
    const first = start(project);
    const url = await first.url;
    const added = await fetch(`${url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session: "c", message: `CALL cron ${JSON.stringify({ action: "add", message: "time to stretch", at_seconds: 3 })}` }),
    });
    expect((await jsonOf(added)).reply).toMatch(/Cron job added: time to stretch \(id: [0-9a-f]{16}\)/);
    const [job] = (await jsonOf(await fetch(`${url}/v1/cron`))).jobs;
    expect(job).toMatchObject({ name: "time to stretch", session_key: SESSION });
    first.child.kill("SIGKILL");
    await first.exited;

    const second = start(project);
    const again = await second.url;
    expect((await jsonOf(await fetch(`${again}/v1/cron`))).jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
    const ran = await eventually(async () => {
      const users = await userMessages(again);
      expect(users).toHaveLength(2);
      return users;
    });
    expect(ran[1]!.content).toMatch(new RegExp(`^\\[Scheduled job "time to stretch" \\(id ${job.id}\\), due .*\\]\\ntime to stretch$`));
    await eventually(async () => expect((await jsonOf(await fetch(`${again}/v1/cron`))).jobs).toEqual([]));
    // Once: still one run a while later.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await userMessages(again)).toHaveLength(2);
    second.child.kill("SIGTERM");
    await second.exited;
  });

  it("picoclaw cron goes through the running gateway's API (with its token): the gateway owns the store", { timeout: 60_000 }, async () => {
    const port = await freePort();
    const project = writeProject({ config: { gateway: { port, token: "cron-cli-token" } } });
    const gateway = start(project, String(port));
    const url = await gateway.url;
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli({ argv, env: {}, cwd: project, stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger: recordingLogger() });
      return { code, out: out.join("\n"), err: err.join("\n") };
    };
    const added = await cli("cron", "add", "--session", "agent:main:http:c", "--message", "from the CLI", "--at", "600");
    expect(added.code, added.err).toBe(0);
    const id = /\(id: ([0-9a-f]{16})\)/.exec(added.out)![1]!;
    const listed = (await jsonOf(await fetch(`${url}/v1/cron`, { headers: { authorization: "Bearer cron-cli-token" } }))).jobs;
    expect(listed.map((job: { id: string }) => job.id)).toEqual([id]);
    expect((await cli("cron", "list")).out).toContain(id);
    expect((await cli("cron", "remove", id)).out).toBe(`Cron job removed: ${id}`);
    expect((await jsonOf(await fetch(`${url}/v1/cron`, { headers: { authorization: "Bearer cron-cli-token" } }))).jobs).toEqual([]);
    gateway.child.kill("SIGTERM");
    await gateway.exited;
  });
});

/** `picoclaw` in-process in `cwd`: exit code and what it printed. */
async function cliRun(argv: string[], opts: { cwd: string }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({ argv, env: {}, cwd: opts.cwd, stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger: recordingLogger() });
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("picoclaw cron, with no gateway running: in the store itself", () => {
  it("adds, lists and removes a job; a bad schedule or a missing option is an error naming it", async () => {
    // Nothing listens on a port just freed: the command opens the session folder itself.
    const port = await freePort();
    const project = writeProject({ config: { gateway: { port } } });
    const added = await cliRun(["cron", "add", "--session", "alice", "--message", "water the plants", "--every", "3600"], { cwd: project });
    expect(added.code).toBe(0);
    const id = /\(id: ([0-9a-f]{16})\)/.exec(added.stdout)![1]!;
    const listed = await cliRun(["cron", "list"], { cwd: project });
    expect(listed.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+SCHEDULE\s+NEXT RUN\s+SESSION$/);
    expect(listed.stdout.split("\n")[1]).toMatch(new RegExp(`^${id}\\s+water the plants\\s+every 3600s\\s+\\S+\\s+agent:main:http:alice$`));
    expect((await cliRun(["cron", "add", "--session", "alice", "--message", "x", "--cron", "nope"], { cwd: project })).stderr).toMatch(
      /cron_expr: "nope" is not a 5-field cron expression/,
    );
    expect((await cliRun(["cron", "add", "--message", "x", "--at", "5"], { cwd: project })).code).toBe(2);
    expect((await cliRun(["cron", "remove", id], { cwd: project })).stdout).toBe(`Cron job removed: ${id}`);
    expect((await cliRun(["cron", "remove", id], { cwd: project })).code).toBe(1);
    expect((await cliRun(["cron", "list"], { cwd: project })).stdout).toBe("No scheduled jobs.");
  });
});
