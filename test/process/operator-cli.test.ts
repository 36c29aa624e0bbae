/**
 * What an operator types, on the real process (`node dist/main.js`):
 * `gateway --host/--port` over the config and the environment,
 * `picoclaw status` finding the running gateway (exit 0) and saying when
 * none runs (exit 1), and `GET /metrics` counting a turn and a tool call,
 * behind the token.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { parsePrometheus } from "../support/prometheus.js";
import { within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const main = path.join(root, "dist", "main.js");
const run = promisify(execFile);

/** `picoclaw ...args` in `cwd`: its exit code and output (a non-zero exit is an answer, not a failure). */
async function picoclaw(cwd: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], { cwd, env: { ...process.env, PICOCLAW_CONFIG: "", ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function startGateway(cwd: string, args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [main, "gateway", ...args], {
    cwd,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
  return {
    url: within('the gateway\'s "listening on" line', listening, { instead: () => output }),
    stop: async () => {
      child.kill("SIGTERM");
      return within("the gateway to exit on SIGTERM", exited);
    },
  };
}

describe("the operator's command line, on the real process", () => {
  it("gateway --host/--port win over the config and the environment; status finds it (exit 0) and, once it stopped, says none answers (exit 1); /metrics counts a turn and a tool call behind the token", {
    timeout: 60_000,
  }, async () => {
    const project = writeProject({ config: { gateway: { host: "localhost", port: 1, token: "tok" } } });
    const gateway = startGateway(project, ["--host", "127.0.0.1", "--port", "0"], { PICOCLAW_GATEWAY_PORT: "2" });
    let stopped = false;
    try {
      const url = await gateway.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const port = new URL(url).port;
      expect(["1", "2"]).not.toContain(port);

      const status = await picoclaw(project, ["status", "--port", port]);
      expect(status.code).toBe(0);
      // Asked at the config's host, at the port given.
      expect(status.stdout).toContain(`picoclaw gateway running at http://localhost:${port}`);
      expect(status.stdout).toMatch(/version\s+\d+\.\d+\.\d+ \(node v\d+/);
      expect(status.stdout).toMatch(/uptime\s+\d+s/);
      expect(status.stdout).toMatch(/agents\s+main \(default\)/);
      expect(status.stdout).toContain(`store     jsonl ${path.join(project, "sessions")}`);
      expect(status.stdout).not.toContain("tok");
      // The token is the config's: another one is refused, and status says so.
      const refused = await picoclaw(project, ["status", "--port", port], { PICOCLAW_GATEWAY_TOKEN: "other" });
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/answers at .* but refuses this config's token/);

      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      const auth = { authorization: "Bearer tok" };
      const chat = await fetch(`${url}/v1/chat`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ message: `CALL list_dir ${JSON.stringify({ path: "." })}` }),
      });
      expect(chat.status).toBe(200);
      const res = await fetch(`${url}/metrics`, { headers: auth });
      expect(res.status).toBe(200);
      const m = parsePrometheus(await res.text());
      expect(m.value("picoclaw_turns_total", { agent: "main", outcome: "done" })).toBe(1);
      expect(m.value("picoclaw_tool_calls_total", { tool: "list_dir" })).toBe(1);
      expect(m.value("picoclaw_sessions_active")).toBe(1);
      expect(m.value("process_resident_memory_bytes")).toBeGreaterThan(0);

      expect(await gateway.stop()).toBe(0);
      stopped = true;
      const none = await picoclaw(project, ["status", "--port", port]);
      expect(none.code).toBe(1);
      expect(none.stdout).toContain(`No gateway answers at http://localhost:${port}`);
    } finally {
      if (!stopped) await gateway.stop();
    }
  });

  it("status says when a process holds the session folder but nothing answers at the address", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: { gateway: { port: 1 } } });
    const gateway = startGateway(project, ["--port", "0"], {});
    try {
      await gateway.url;
      // Asked at the config's port, where nothing listens.
      const status = await picoclaw(project, ["status", "--port", "9"]);
      expect(status.code).toBe(1);
      expect(status.stdout).toMatch(/^No gateway answers at http:\/\/127\.0\.0\.1:9 /);
      expect(status.stdout).toMatch(/Process \d+ \(since .*\) holds the session folder .*sessions: a gateway on another address/);
    } finally {
      await gateway.stop();
    }
  });

  it("/metrics counts the tokens a model reports, cached ones too, under the model_name that answered", { timeout: 60_000 }, async () => {
    const model = await FakeModelServer.start(() =>
      textCompletion("hello back", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } } }),
    );
    const gateway = startGateway(writeProject({ config: openaiConfig(model.url) }), ["--port", "0"], {});
    try {
      const url = await gateway.url;
      for (const message of ["one", "two"]) {
        const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) });
        expect(res.status).toBe(200);
      }
      const m = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
      expect(m.value("picoclaw_model_tokens_total", { agent: "main", model: "fake", kind: "input" })).toBe(12);
      expect(m.value("picoclaw_model_tokens_total", { agent: "main", model: "fake", kind: "output" })).toBe(10);
      expect(m.value("picoclaw_model_tokens_total", { agent: "main", model: "fake", kind: "cache_read" })).toBe(8);
      expect(m.value("picoclaw_model_call_duration_seconds_count", { agent: "main", model: "fake" })).toBe(2);
    } finally {
      await gateway.stop();
      await model.close();
    }
  });
});
