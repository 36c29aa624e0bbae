import path from "node:path";
import { describe, expect, it } from "vitest";
import { cliChat } from "../support/cli.js";
import { runCli } from "../../src/cli.js";
import { recordingLogger, writeProject } from "../support/project.js";

async function cli(argv: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({
    argv,
    env: opts.env ?? {},
    cwd: opts.cwd ?? writeProject({ config: {} }),
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    logger: recordingLogger(),
  });
  return { code, stdout: out.join("\n"), stderr: err.join("\n") };
}

describe("picoclaw agent -m", () => {
  it("runs one turn and prints the reply on stdout", async () => {
    const { code, stdout } = await cli(["agent", "-m", "hello there"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^You said: hello there\n/);
  });

  it("takes --agent and --config", async () => {
    const project = writeProject({ config: {}, agents: { main: "m", writer: "---\nname: Writer\n---\nWrite." } });
    const { code, stdout } = await cli(["agent", "--config", path.join(project, "picoclaw.config.json"), "--agent", "writer", "-m", "x"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^You said: x/);
  });

  it("denies a call under approval ask, with the reason, since nobody is there to answer", async () => {
    const { code, stdout } = await cli(["agent", "-m", `CALL exec ${JSON.stringify({ action: "run", command: "touch ran" })}`]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/exec \(error\): exec was not run: it needs a person's approval .* nobody is there to answer it \(picoclaw agent -m/);
  });

  it("an unknown agent is a usage error (exit 2) with a message", async () => {
    const { code, stderr } = await cli(["agent", "--agent", "ghost", "-m", "x"]);
    expect(code).toBe(2);
    expect(stderr).toBe('picoclaw: agent_not_found: unknown agent "ghost"');
  });

  it("a --session a session key cannot be built from is a usage error", async () => {
    const { code, stderr } = await cli(["agent", "-m", "x", "--session", "a:subagent:b"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^picoclaw: --session: expected 1-128 characters/);
  });

  it("without -m is a usage error", async () => {
    const { code, stderr } = await cli(["agent"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/agent needs -m TEXT/);
  });
});

describe("picoclaw agents", () => {
  it("lists agents, models and effective tools", async () => {
    const project = writeProject({
      config: {
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          { model_name: "gpt", provider: "builtin", model: "scripted" },
        ],
      },
      agents: { main: "---\nname: Main\n---\np", researcher: "---\nname: Researcher\nmodel: gpt\ntools: []\n---\np" },
    });
    const { code, stdout } = await cli(["agents"], { cwd: project });
    expect(code).toBe(0);
    expect(stdout.split("\n")).toEqual([
      "ID          MODEL  TOOLS                                                                                                          NAME",
      "main        local  append_file,ask_user,cron,edit_file,exec,list_dir,memory_search,read_file,spawn,subagent,web_fetch,write_file  Main",
      "researcher  gpt    -                                                                                                              Researcher",
    ]);
  });
});

describe("picoclaw --version", () => {
  it("prints the package's version", async () => {
    const { code, stdout } = await cli(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^picoclaw \d+\.\d+\.\d+$/);
    expect((await cli(["-v"])).stdout).toBe(stdout);
  });
});

const chat = cliChat;

describe("picoclaw agent without -m: a chat", () => {
  it("answers each line in one session until /exit, and slash commands work", async () => {
    const { code, out } = await chat("hello\n\n/help\nsecond\n/exit\nnever sent\n");
    expect(code).toBe(0);
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^You said: hello/);
    expect(out[1]).toMatch(/^Commands \(answered by the gateway/);
    expect(out[2]).toMatch(/^You said: second/);
  });

  it("ends at the end of the input; on a terminal it greets and prompts", async () => {
    const { code, out, err, prompts } = await chat("one\n", true);
    expect(code).toBe(0);
    expect(out).toHaveLength(1);
    expect(err[0]).toBe('Chatting with agent "main"; /exit ends, /help lists the commands.');
    expect(prompts).toEqual(["> ", "> "]);
  });
});

describe("picoclaw skills list", () => {
  it("lists the agent's skills: the workspace's, then the home's, then the built-in ones the package ships", async () => {
    const project = writeProject({ config: {}, files: { "workspace/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Ship the app.\n---\nbody" } });
    const home = writeProject({ config: {}, files: { "skills/review/SKILL.md": "---\nname: review\ndescription: Review a change.\n---\nbody" } });
    const { code, stdout } = await cli(["skills", "list"], { cwd: project, env: { PICOCLAW_HOME: home } });
    expect(code).toBe(0);
    const rows = stdout.split("\n").map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(["NAME", "SOURCE", "DESCRIPTION", "PATH"]);
    expect(rows.slice(1).map((row) => [row[0], row[1]])).toEqual([
      ["deploy", "workspace"],
      ["review", "global"],
      ["plan-with-todo", "builtin"],
      ["summarise-web-page", "builtin"],
    ]);
    expect(rows[1]![3]).toBe(path.join(project, "workspace", "skills", "deploy", "SKILL.md"));
  });

  it("an unknown skills command is a usage error", async () => {
    const { code, stderr } = await cli(["skills", "install", "x"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown skills command "install"; try: picoclaw skills list/);
  });
});

describe("picoclaw config check", () => {
  it("fails (exit 2) when an agent names a model that is not in model_list, naming its AGENT.md", async () => {
    const project = writeProject({ config: {}, agents: { main: "m", writer: "---\nname: Writer\nmodel: gpt-typo\n---\nWrite." } });
    const { code, stderr, stdout } = await cli(["config", "check"], { cwd: project });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain(`  - ${path.join(project, "agents", "writer", "AGENT.md")}: model "gpt-typo" is not a model_name in model_list (it has: local)`);
  });

  it("prints the effective config with secrets masked", async () => {
    const project = writeProject({
      config: {
        gateway: { token: "${TOKEN}" },
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          { model_name: "gpt", provider: "openai", model: "m", api_key: "sk-live-123456", custom_headers: { "X-Api-Key": "k-999", "X-Title": "demo" } },
        ],
      },
    });
    const { code, stdout, stderr } = await cli(["config", "check"], { cwd: project, env: { TOKEN: "gateway-secret" } });
    expect(code).toBe(0);
    expect(stderr).toContain("config OK");
    const shown = JSON.parse(stdout);
    expect(shown.gateway.token).toBe("********");
    expect(shown.model_list[1].api_key).toBe("********");
    expect(shown.model_list[1].custom_headers).toEqual({ "X-Api-Key": "********", "X-Title": "demo" });
    expect(shown.tools.todo).toEqual({ enabled: false, max_plans: 256, style: "list" });
    expect(stdout).not.toContain("sk-live");
    expect(stdout).not.toContain("gateway-secret");
  });

  it("a bad config exits 2 with one line per problem, each naming its path", async () => {
    const project = writeProject({ config: { gateway: { port: "80" }, tools: { todo: { enabled: "yes" } } } });
    const { code, stderr } = await cli(["config", "check"], { cwd: project });
    expect(code).toBe(2);
    expect(stderr.split("\n")).toEqual([
      "picoclaw: invalid configuration:",
      "  - gateway.port: expected number, received string",
      "  - tools.todo.enabled: expected boolean, received string",
    ]);
  });

  it("a missing default agent stops start-up naming agents.default", async () => {
    const project = writeProject({ config: {}, agents: { other: "x" } });
    const { code, stderr } = await cli(["config", "check"], { cwd: project });
    expect(code).toBe(2);
    expect(stderr).toMatch(/agents\.default: no agent "main" in .*agents \(found: other\)/);
  });

  it("an unknown command is a usage error", async () => {
    expect((await cli(["fly"])).code).toBe(2);
    expect((await cli(["config", "fix"])).stderr).toMatch(/unknown config command "fix"/);
    expect((await cli(["--help"])).code).toBe(0);
  });
});

describe("the command line people type (PicoClaw's names)", () => {
  it("--help works on every command and subcommand, each printing its own usage (exit 0)", async () => {
    for (const argv of [
      ["gateway"],
      ["agent"],
      ["agents"],
      ["model"],
      ["status"],
      ["skills"],
      ["skills", "list"],
      ["cron"],
      ["cron", "add"],
      ["cron", "remove"],
      ["pairing"],
      ["pairing", "approve"],
      ["config"],
      ["config", "check"],
      ["onboard"],
      ["version"],
    ]) {
      for (const flag of ["--help", "-h"]) {
        const { code, stdout } = await cli([...argv, flag]);
        expect(code, argv.join(" ")).toBe(0);
        expect(stdout, argv.join(" ")).toMatch(new RegExp(`^Usage: picoclaw ${argv[0]}\\b`));
        expect(stdout).toContain("--config PATH");
      }
    }
    expect((await cli(["help", "status"])).stdout).toMatch(/^Usage: picoclaw status/);
    const overview = (await cli(["--help"])).stdout;
    for (const command of ["gateway", "agent", "model", "status", "version"]) expect(overview).toContain(`  picoclaw ${command} `);
  });

  it("a flag the command does not take is exit 2, naming the flag", async () => {
    const unknown = await cli(["agent", "-m", "x", "--frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^picoclaw: unknown flag --frobnicate \(picoclaw agent --help lists its flags\)\n\nUsage: picoclaw agent/);
    expect((await cli(["gateway", "-x"])).stderr).toMatch(/^picoclaw: unknown flag -x/);
    // A flag of another command is no flag of this one.
    expect((await cli(["agents", "--model", "local"])).stderr).toMatch(/^picoclaw: unknown flag --model/);
    expect((await cli(["agent", "-s"])).stderr).toMatch(/^picoclaw: --session needs a value/);
    expect((await cli(["gateway", "--port", "eighty"])).stderr).toMatch(/^picoclaw: --port: expected a port number 0-65535 \(got "eighty"\)/);
    expect((await cli(["gateway", "--port", "70000"])).code).toBe(2);
  });

  it("agent -s names the session as --session does", async () => {
    const ok = await cli(["agent", "-s", "chat1", "-m", "hi"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^You said: hi/);
    const bad = await cli(["agent", "-s", "a:b", "-m", "hi"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^picoclaw: --session: expected 1-128 characters/);
  });

  it("agent --model runs every agent on that model for this run, over the agent's own; a name not in model_list is exit 2", async () => {
    const project = writeProject({
      config: {
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          // Nothing answers on port 1: a turn on this model fails, naming it.
          { model_name: "remote", provider: "openai", model: "m", api_base: "http://127.0.0.1:1/v1", api_key: "k" },
        ],
      },
      agents: { main: "---\nname: Main\nmodel: local\n---\np" },
    });
    expect((await cli(["agent", "-m", "hi"], { cwd: project })).code).toBe(0);
    const remote = await cli(["agent", "-m", "hi", "--model", "remote"], { cwd: project });
    expect(remote.code).toBe(1);
    expect(remote.stderr).toMatch(/remote/);
    const unknown = await cli(["agent", "-m", "hi", "--model", "gpt-9"], { cwd: project });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^picoclaw: --model: "gpt-9" is not a model_name in model_list \(it has: local, remote\)/);
  });

  it("agent -d logs a line per turn and model answer; without it, none", async () => {
    const lines = async (argv: string[]) => {
      const logger = recordingLogger();
      const code = await runCli({ argv, env: {}, cwd: writeProject({ config: {} }), stdout: () => {}, stderr: () => {}, logger });
      expect(code).toBe(0);
      return logger.lines.map((l) => l.message);
    };
    expect(await lines(["agent", "-m", "hi", "-d"])).toEqual(expect.arrayContaining(["model answered", "turn"]));
    expect(await lines(["agent", "-m", "hi"])).not.toContain("turn");
  });

  it("version prints what --version prints", async () => {
    const version = await cli(["version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe((await cli(["--version"])).stdout);
  });

  it("model lists model_list: provider, model and the agents using each, the default marked", async () => {
    const project = writeProject({
      config: {
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          { model_name: "gpt", provider: "openai", model: "gpt-4o-mini", api_base: "https://api.openai.com/v1", api_key: "sk-hidden-1" },
          { model_name: "spare", provider: "builtin", model: "scripted" },
        ],
      },
      agents: { main: "---\nname: Main\n---\np", helper: "---\nname: Helper\n---\np", writer: "---\nname: Writer\nmodel: gpt\n---\np" },
    });
    const { code, stdout } = await cli(["model"], { cwd: project });
    expect(code).toBe(0);
    expect(stdout.split("\n")).toEqual([
      "MODEL_NAME  PROVIDER  MODEL        AGENTS",
      "local *     builtin   scripted     helper,main",
      "gpt         openai    gpt-4o-mini  writer",
      "spare       builtin   scripted     -",
      "* agents.defaults.model_name: what an agent without a model of its own uses",
    ]);
    expect(stdout).not.toContain("sk-hidden");
    expect((await cli(["model", "gpt"], { cwd: project })).code).toBe(2);
  });

  it("status with gateway.port 0 cannot know where to ask: exit 2, saying to give --port", async () => {
    const { code, stderr } = await cli(["status"], { cwd: writeProject({ config: { gateway: { port: 0 } } }) });
    expect(code).toBe(2);
    expect(stderr).toMatch(/gateway\.port is 0 .* picoclaw status --port PORT/);
  });
});
