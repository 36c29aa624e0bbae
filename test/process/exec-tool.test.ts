/**
 * exec through the gateway, as a model calls it: PicoClaw's parameters and
 * result texts; the guard refuses before anything runs; a command that
 * outlives its time, forks a daemon, ignores SIGTERM, floods its output or
 * waits for stdin ends on time with nothing left running and its output
 * bounded; the environment carries no secret; a chat channel's turn may not
 * run it; under bubblewrap a command writes only the workspace and reaches
 * no network.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { findBwrap } from "../../src/features/exec/sandbox.js";
import { type Harness, harness } from "../support/project.js";
import { eventually } from "../support/wait.js";

const TOKEN = "gateway-token-0123456789";
const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

function gateway(exec: Record<string, unknown> = {}, extra: { env?: Record<string, string>; config?: Record<string, unknown> } = {}) {
  const h = harness({
    // The guard is the subject here, not approvals: commands run without asking.
    config: { tools: { exec: { enabled: true, approval: "allow", ...exec } }, ...extra.config },
    env: { ...ENV, PICOCLAW_GATEWAY_TOKEN: TOKEN, ...extra.env },
  });
  const root = realpathSync(path.join(h.dir, "workspace"));
  return { h, root };
}

/** Runs one exec call as a turn; the result the model got, and what the user was shown. */
async function exec(h: Harness, args: Record<string, unknown>) {
  const session = `s${Math.random().toString(36).slice(2, 8)}`;
  const { json } = await h.chat({ message: `CALL exec ${JSON.stringify({ action: "run", ...args })}`, session }, { authorization: `Bearer ${TOKEN}` });
  const history = await h.runtime.historyOf(`agent:main:http:${session}`);
  const tool = history.find((m) => m.role === "tool")!;
  const shown = (json.delivered as { from: string; text: string }[]).filter((d) => d.from === "exec").map((d) => d.text);
  return { text: tool.content as string, error: (tool as { is_error?: boolean }).is_error === true, shown };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("exec runs a command", () => {
  it("in the workspace with sh -c: stdout, then STDERR, the same text for the model and the user", async () => {
    const { h, root } = gateway();
    const result = await exec(h, { command: "pwd; echo hi; echo oops >&2" });
    expect(result.text).toBe(`${root}\nhi\n\nSTDERR:\noops\n`);
    expect(result.error).toBe(false);
    expect(result.shown).toEqual([result.text]);
  });

  it("says a failed command's exit code, and (no output) for silence", async () => {
    const { h } = gateway();
    expect(await exec(h, { command: "echo partial; exit 3" })).toMatchObject({ text: "partial\n\n\n[Command exited with code 3]", error: true });
    expect(await exec(h, { command: "true" })).toMatchObject({ text: "(no output)", error: false });
  });

  it("in a folder of the workspace given as cwd, never one outside it", async () => {
    const { h, root } = gateway();
    mkdirSync(path.join(root, "project"));
    expect((await exec(h, { command: "pwd", cwd: "project" })).text).toBe(`${path.join(root, "project")}\n`);
    const outside = await exec(h, { command: "pwd", cwd: "/etc" });
    expect(outside).toMatchObject({ error: true });
    expect(outside.text).toMatch(/^Command blocked by safety guard \(access denied: \/etc is outside the workspace/);
  });

  it("with stdin closed: a command reading it gets end of file at once", async () => {
    const { h } = gateway();
    expect((await exec(h, { command: "cat; echo after" })).text).toBe("after\n");
  });

  it("with an environment without PICOCLAW_*, secret-named variables or values holding a configured secret", async () => {
    const { h } = gateway(
      {},
      {
        env: { OPENAI_API_KEY: "sk-not-for-commands-1", DATABASE_URL: "postgres://u:hunter2-long-secret@db/x", PLAIN: "visible", PICOCLAW_LOG_LEVEL: "warn" },
        config: {
          model_list: [
            { model_name: "local", provider: "builtin", model: "scripted" },
            { model_name: "m", provider: "openai", model: "x", api_base: "http://127.0.0.1:9", api_key: "${DATABASE_URL}" },
          ],
        },
      },
    );
    const { text } = await exec(h, { command: "env" });
    expect(text).toContain("PLAIN=visible");
    expect(text).toContain("PATH=");
    // OPENAI_API_KEY by its name; DATABASE_URL because its value is a secret of the config (api_key: ${DATABASE_URL}).
    expect(text).not.toMatch(/OPENAI_API_KEY|sk-not-for-commands|DATABASE_URL|hunter2|PICOCLAW_GATEWAY_TOKEN|PICOCLAW_LOG_LEVEL|gateway-token/);
  });
});

describe("exec refuses before anything runs", () => {
  it("a dangerous command anywhere in the line, in PicoClaw's words, and the rest of the line does not run either", async () => {
    const { h, root } = gateway();
    for (const command of ["touch made; rm -rf /tmp/x", "touch made && r'm' -rf x", "touch made; sh -c 'sudo id'", "touch made | X=rm; $X -rf x"]) {
      const result = await exec(h, { command });
      expect(result.error, command).toBe(true);
      expect(result.text, command).toMatch(/^Command blocked by safety guard \(/);
      expect(result.shown, command).toEqual([]);
    }
    expect(existsSync(path.join(root, "made"))).toBe(false);
  });

  it("in allowlist mode, any program not listed", async () => {
    const { h } = gateway({ allowed_commands: ["echo", "ls"] });
    expect((await exec(h, { command: "echo ok; ls" })).error).toBe(false);
    expect((await exec(h, { command: "echo ok | tee x" })).text).toBe(
      'Command blocked by safety guard (not in allowlist: "tee" is not in tools.exec.allowed_commands)',
    );
  });

  it("paths outside the workspace, with restrict_to_workspace", async () => {
    const { h, root } = gateway();
    writeFileSync(path.join(h.dir, "secret.txt"), "the secret");
    for (const command of ["cat ../secret.txt", `cat ${h.dir}/secret.txt`, "cd ..", "ls /etc > listing"]) {
      const result = await exec(h, { command });
      expect(result.text, command).toMatch(/^Command blocked by safety guard \((path traversal detected|path outside working dir)/);
    }
    expect(existsSync(path.join(root, "listing"))).toBe(false);
  });

  it("a turn from a chat channel, unless allow_remote", async () => {
    const channel = { channel_list: [{ type: "telegram", token: "123456:not-a-real-bot-token", allow_from: [42] }] };
    for (const allow_remote of [false, true]) {
      const { h } = gateway({ allow_remote }, { config: channel });
      const outcome = await h.runtime.handleMessage({
        agentId: "main",
        channel: "telegram",
        chatId: "42",
        text: 'CALL exec {"action":"run","command":"echo from the chat"}',
      });
      const tool = (await h.runtime.historyOf(outcome.sessionKey)).find((m) => m.role === "tool")!;
      expect(tool.content).toBe(
        allow_remote
          ? "from the chat\n"
          : "exec is restricted to internal channels: this conversation came from a chat channel, and tools.exec.allow_remote is false",
      );
    }
  });

  it("background sessions and the other actions, saying what to do instead", async () => {
    const { h } = gateway();
    expect((await exec(h, { action: "poll", sessionId: "abc" })).text).toMatch(
      /^action "poll" is not available: this gateway runs commands in the foreground only/,
    );
    expect((await exec(h, { command: "sleep 1", background: "true" })).text).toMatch(/^background and pty are not available/);
    expect((await exec(h, {})).text).toBe("command is required");
  });
});

describe("exec ends what it started, on time, with bounded output", () => {
  it("a command past its timeout is killed with its whole group: PicoClaw's message, the partial output, nothing left running", async () => {
    const { h, root } = gateway({ timeout_seconds: 1 });
    const result = await exec(h, { command: "echo started; sleep 30 & echo $! > child.pid; trap '' TERM; sleep 30" });
    expect(result).toMatchObject({ error: true, text: "Command timed out after 1s\n\nPartial output before timeout:\nstarted\n" });
    const child = Number(readFileSync(path.join(root, "child.pid"), "utf8"));
    await eventually(() => expect(alive(child)).toBe(false));
  });

  it("the turn's end stops a command: its deadline kills the process group, and the turn answers 504", async () => {
    const { h, root } = gateway({ timeout_seconds: 0 }, { config: { agents: { defaults: { turn_timeout_ms: 1000 } } } });
    const { status } = await h.chat(
      { message: `CALL exec ${JSON.stringify({ action: "run", command: "echo $$ > shell.pid; sleep 60" })}`, session: "deadline" },
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(status).toBe(504);
    const shell = Number(readFileSync(path.join(root, "shell.pid"), "utf8"));
    await eventually(() => expect(alive(shell)).toBe(false));
  });

  it("a call may ask for less time than the config's, never more", async () => {
    const { h } = gateway({ timeout_seconds: 1 });
    expect((await exec(h, { command: "sleep 5", timeout: 60 })).text).toBe("Command timed out after 1s");
  });

  it("a daemon that left the process group (setsid) is killed when the command ends", async () => {
    const { h, root } = gateway();
    const result = await exec(h, { command: "setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' > /dev/null 2>&1 & sleep 0.3; echo launched" });
    expect(result.text).toBe("launched\n");
    const daemon = Number(readFileSync(path.join(root, "daemon.pid"), "utf8"));
    await eventually(() => expect(alive(daemon)).toBe(false));
  });

  it("a flood of output keeps its start and end within max_output_bytes, and says what was cut", async () => {
    const { h } = gateway({ max_output_bytes: 4096 });
    const { text } = await exec(h, { command: "echo FIRST; head -c 200000000 /dev/zero | tr '\\0' x; echo; echo LAST" });
    expect(text.startsWith("FIRST\nxxx")).toBe(true);
    expect(text.endsWith("xxx\nLAST\n")).toBe(true);
    expect(text).toMatch(/\n\.\.\. \(190\.7 MiB of output cut here; 190\.7 MiB in all\) \.\.\.\n/);
    expect(Buffer.byteLength(text)).toBeLessThan(4096 + 200);
  });
});

const bwrap = findBwrap(process.env.PATH);
const sandboxed = bwrap || process.env.PICOCLAW_REQUIRE_BWRAP === "1" ? describe : describe.skip;

sandboxed("exec under bubblewrap (sandbox: bwrap)", () => {
  it("a command may write its workspace and nothing else, and sees no file of the host outside the system's", async () => {
    const { h, root } = gateway({ sandbox: "bwrap" }, { config: { agents: { defaults: { restrict_to_workspace: false } } } });
    writeFileSync(path.join(h.dir, "secret.txt"), "the host's secret");
    const written = await exec(h, { command: "echo inside > made.txt && cat made.txt" });
    expect(written.text).toBe("inside\n");
    expect(readFileSync(path.join(root, "made.txt"), "utf8")).toBe("inside\n");
    const etc = await exec(h, { command: "touch /etc/picoclaw-escape" });
    expect(etc.error).toBe(true);
    expect(existsSync("/etc/picoclaw-escape")).toBe(false);
    const secret = await exec(h, { command: `cat ${h.dir}/secret.txt` });
    expect(secret.error).toBe(true);
    expect(secret.text).toContain("No such file or directory");
    const home = await exec(h, { command: "ls /root /home 2>&1; echo $HOME" });
    expect(home.text).not.toContain("the host's secret");
  });

  it("a command reaches no network, not even the host's loopback, unless sandbox_network", async () => {
    const server = createServer((_req, res) => res.end("reached the host"));
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
    const port = (server.address() as { port: number }).port;
    const command = `curl -s -m 3 http://127.0.0.1:${port}/ || echo unreachable`;
    const closed = gateway({ sandbox: "bwrap" }, { config: { agents: { defaults: { restrict_to_workspace: false } } } });
    expect((await exec(closed.h, { command })).text).toBe("unreachable\n");
    const open = gateway({ sandbox: "bwrap", sandbox_network: true }, { config: { agents: { defaults: { restrict_to_workspace: false } } } });
    expect((await exec(open.h, { command })).text).toBe("reached the host");
  });

  it("nothing a sandboxed command starts outlives it", async () => {
    const { h } = gateway({ sandbox: "bwrap", timeout_seconds: 1 });
    const marker = `picoclaw-sandbox-${Math.random().toString(36).slice(2)}`;
    const result = await exec(h, { command: `setsid sleep 77 ${marker} > /dev/null 2>&1 & sleep 30` });
    expect(result.text).toBe("Command timed out after 1s");
    await eventually(() => {
      expect(listProcesses().filter((cmd) => cmd.includes(marker))).toEqual([]);
    });
  });
});

describe("start-up", () => {
  it("fails naming tools.exec.sandbox when bwrap is asked for and not on PATH", () => {
    expect(() => gateway({ sandbox: "bwrap" }, { env: { PATH: "/nowhere" } })).toThrow(
      /tools\.exec\.sandbox: "bwrap" needs bubblewrap, and no bwrap is on PATH/,
    );
  });

  it("refuses a custom pattern that is not a regular expression, naming it", () => {
    expect(() => gateway({ custom_deny_patterns: ["ok", "(unclosed"] })).toThrow(/tools\.exec\.custom_deny_patterns\[1\]: not a valid regular expression/);
  });
});

/** The command lines of the processes this machine runs (from /proc). */
function listProcesses(): string[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      } catch {
        return "";
      }
    });
}
