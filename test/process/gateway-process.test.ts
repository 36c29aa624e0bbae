import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { jsonOf, openaiConfig, tempDir, writeProject } from "../support/project.js";
import { WAIT_MS, eventually, waitFor, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");

/** The URL of the gateway's "listening on" line; `ms` for a wait longer than a wait's default (npm start may build first). */
function waitForListening(child: ChildProcess, output: { text: string }, ms = WAIT_MS): Promise<string> {
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output.text += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output.text);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${output.text}`)));
  });
  return within('the gateway\'s "listening on" line', listening, { ms, instead: () => `its output so far:\n${output.text}` });
}

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

describe("the real gateway process", () => {
  it("`npm start` serves a chat over a socket, and a SIGTERM to the npm process itself stops the gateway (nothing left on its port)", {
    timeout: 120_000,
  }, async () => {
    const project = writeProject({
      config: { gateway: { token: "tok" }, tools: { todo: { enabled: false } } },
      agents: { main: "---\nname: Main\n---\nYou help.", second: "---\nname: Second\ntools: []\n---\nYou also help." },
    });
    const child = spawn("npm", ["start", "--silent"], {
      cwd: root,
      detached: true,
      env: { ...process.env, PICOCLAW_CONFIG: path.join(project, "picoclaw.config.json"), PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { text: "" };
    const exited = exitOf(child);
    try {
      const url = await waitForListening(child, output, 60_000);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect((await fetch(`${url}/v1/agents`)).status).toBe(401);
      const res = await fetch(`${url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer tok" },
        body: JSON.stringify({ message: "hello", session: "proc" }),
      });
      expect(res.status).toBe(200);
      const body = await jsonOf(res);
      expect(body).toMatchObject({ agent: "main", session_key: "agent:main:http:proc" });
      expect(body.reply).toMatch(/^You said: hello/);
      const agents = await jsonOf(await fetch(`${url}/v1/agents`, { headers: { authorization: "Bearer tok" } }));
      expect(agents.agents.map((a: { id: string }) => a.id)).toEqual(["main", "second"]);
      // SIGTERM to npm's own pid (what `kill <pid of npm start>` does) reaches the gateway: it stops, and frees its port.
      process.kill(child.pid!, "SIGTERM");
      await eventually(() => expect(output.text).toMatch(/"msg":"stopped"/));
      await expect(fetch(`${url}/health`)).rejects.toThrow();
    } finally {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Already gone, as it should be.
      }
    }
    await within("npm start to exit", exited);
  });

  it("SIGTERM lets an in-flight turn finish, then exits 0", { timeout: 60_000 }, async () => {
    // The model answers only once the gateway has taken the SIGTERM, so the turn is surely in flight then.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const model = await FakeModelServer.start(() => answered.then(() => textCompletion("slow answer")));
    try {
      const project = writeProject({ config: openaiConfig(model.url) });
      const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
        cwd: project,
        env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output = { text: "" };
      const exited = exitOf(child);
      const url = await waitForListening(child, output);
      const pending = fetch(`${url}/v1/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "hi" }),
      });
      await waitFor("the model's first request", () => model.requests.length > 0, { instead: () => "it got none" });
      child.kill("SIGTERM");
      await eventually(() => expect(output.text).toContain("SIGTERM: stopping"));
      answer();
      const res = await pending;
      expect(res.status).toBe(200);
      expect((await jsonOf(res)).reply).toBe("slow answer");
      const { code } = await within("the gateway to exit after its turn", exited);
      expect(code, output.text).toBe(0);
    } finally {
      await model.close();
    }
  });

  it("a bad config stops start-up with exit code 2 and names the JSON path", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: { tools: { todo: { enabled: "yes" } }, gateway: { bind: 1 } } });
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway", "--config", path.join(project, "picoclaw.config.json")], {
      cwd: tempDir(),
      env: { ...process.env, PICOCLAW_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const { code } = await within("the gateway to exit on its bad config", exitOf(child));
    expect(code).toBe(2);
    expect(stderr).toContain("tools.todo.enabled: expected boolean, received string");
    expect(stderr).toContain('gateway: unknown key "bind"');
  });

  it("a bad environment value stops start-up naming the variable", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: {} });
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
      cwd: project,
      env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_TOOLS_TODO_ENABLED: "maybe" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
    const { code } = await within("the gateway to exit on its bad environment value", exitOf(child));
    expect(code).toBe(2);
    expect(stderr).toContain('PICOCLAW_TOOLS_TODO_ENABLED: expected true, false, 1 or 0, got "maybe"');
  });

  it("picoclaw agent without -m chats over stdin until /exit; --version prints the version", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: {} });
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "agent"], {
      cwd: project,
      env: { ...process.env, PICOCLAW_CONFIG: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    const exited = exitOf(child);
    child.stdin!.end("hello from a pipe\n/exit\n");
    expect((await within("picoclaw agent to exit after /exit", exited)).code).toBe(0);
    expect(stdout).toMatch(/^You said: hello from a pipe/);
    const version = spawn(process.execPath, [path.join(root, "dist", "main.js"), "--version"], { stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    version.stdout!.on("data", (c: Buffer) => (printed += c.toString()));
    expect((await within("picoclaw --version to exit", exitOf(version))).code).toBe(0);
    expect(printed).toMatch(/^picoclaw \d+\.\d+\.\d+\n$/);
  });
});
