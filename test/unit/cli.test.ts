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
