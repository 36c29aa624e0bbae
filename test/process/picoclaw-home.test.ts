/**
 * PicoClaw's home layout works here: with no config named and none in the
 * working folder, `$PICOCLAW_HOME/config.json` (or `~/.picoclaw/config.json`)
 * is the config, its workspace `workspace/` beside it, and the workspace's
 * AGENT.md is agent `main` when no agents folder defines one. Proved with
 * PicoClaw's own example config and workspace template (test/fixtures/picoclaw/,
 * copied unchanged; SOURCE.md names where from). `picoclaw onboard` makes
 * that layout and never overwrites a file.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { runCli } from "../../src/cli.js";
import { loadConfig } from "../../src/house.js";
import { textCompletion } from "../support/fake-openai.js";
import { fakeServer } from "../support/models.js";
import { recordingLogger, tempDir } from "../support/project.js";

const FIXTURES = path.resolve(import.meta.dirname, "..", "fixtures", "picoclaw");

/** A user's home holding PicoClaw's ~/.picoclaw: its example config and its workspace template, unchanged. */
function picoclawUser() {
  const home = tempDir();
  const picoclaw = path.join(home, ".picoclaw");
  mkdirSync(picoclaw);
  cpSync(path.join(FIXTURES, "config.example.json"), path.join(picoclaw, "config.json"));
  cpSync(path.join(FIXTURES, "workspace"), path.join(picoclaw, "workspace"), { recursive: true });
  // The working folder has no config of its own.
  return { home, picoclaw, cwd: tempDir() };
}

async function cli(argv: string[], env: Record<string, string>, cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli({ argv, env, cwd, stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger: recordingLogger() });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("~/.picoclaw as PicoClaw leaves it", () => {
  it("is found from a folder without a config: its config.json, its workspace, its AGENT.md as agent main", async () => {
    const { home, picoclaw, cwd } = picoclawUser();
    const loaded = loadConfig({ env: { HOME: home }, cwd });
    expect(loaded.file).toBe(path.join(picoclaw, "config.json"));
    expect(loaded.baseDir).toBe(picoclaw);
    const agents = await cli(["agents"], { HOME: home }, cwd);
    expect(agents.code).toBe(0);
    expect(agents.out).toMatch(/^main\s+gpt-5\.4\s+\S*read_file\S*\s+pico$/m);
  });

  it("picoclaw config check passes, naming the home's config", async () => {
    const { home, picoclaw, cwd } = picoclawUser();
    const checked = await cli(["config", "check"], { HOME: home }, cwd);
    expect(checked.code).toBe(0);
    expect(checked.err).toContain(`config OK: ${path.join(picoclaw, "config.json")}`);
  });

  it("a ./picoclaw.config.json, $PICOCLAW_CONFIG and --config still come first", () => {
    const { home, cwd } = picoclawUser();
    writeFileSync(path.join(cwd, "picoclaw.config.json"), "{}");
    expect(loadConfig({ env: { HOME: home }, cwd }).file).toBe(path.join(cwd, "picoclaw.config.json"));
    const other = path.join(tempDir(), "other.json");
    writeFileSync(other, "{}");
    expect(loadConfig({ env: { HOME: home, PICOCLAW_CONFIG: other }, cwd }).file).toBe(other);
  });

  it("PicoClaw's .security.yml beside it is named in a note, not silently ignored", () => {
    const { home, picoclaw, cwd } = picoclawUser();
    writeFileSync(path.join(picoclaw, ".security.yml"), "model_list: {}\n");
    expect(loadConfig({ env: { HOME: home }, cwd }).warnings).toContain(
      `${path.join(picoclaw, ".security.yml")}: PicoClaw's secrets file is not read here; put its values in ${path.join(picoclaw, ".env")} and write them as \${VAR} in the config`,
    );
  });

  it("the workspace's AGENT.md body, SOUL.md, USER.md and MEMORY.md reach the model, in PicoClaw's order", async () => {
    const server = (await fakeServer()).enqueue(textCompletion("hi"));
    const picoclawHome = tempDir();
    cpSync(path.join(FIXTURES, "workspace"), path.join(picoclawHome, "workspace"), { recursive: true });
    writeFileSync(
      path.join(picoclawHome, "config.json"),
      JSON.stringify({ agents: { defaults: { model_name: "fake" } }, model_list: [{ model_name: "fake", model: "openai/fake-model", api_base: server.url }] }),
    );
    const loaded = loadConfig({ env: { PICOCLAW_HOME: picoclawHome }, cwd: tempDir() });
    const { runtime } = bootstrap(loaded, { logger: recordingLogger(), history: "memory" });
    try {
      await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "c", text: "hello" });
    } finally {
      await runtime.close(0);
    }
    const system = (server.requests.at(-1)!.body as { messages: { role: string; content: string }[] }).messages[0]!;
    expect(system.role).toBe("system");
    const template = (name: string) => readFileSync(path.join(FIXTURES, "workspace", name), "utf8").trim();
    const body = template("AGENT.md").split("\n---\n").slice(1).join("\n---\n").trim();
    expect(system.content).not.toContain("name: pico");
    const at = (text: string) => system.content.indexOf(text);
    expect(at(body)).toBeGreaterThanOrEqual(0);
    expect(at(`## SOUL.md\n\n${template("SOUL.md")}`)).toBeGreaterThan(at(body));
    expect(at(`## USER.md\n\n${template("USER.md")}`)).toBeGreaterThan(at("## SOUL.md"));
    expect(at(`# Memory\n\n${template("memory/MEMORY.md")}`)).toBeGreaterThan(at("## USER.md"));
  });
});

describe("picoclaw onboard", () => {
  it("makes $PICOCLAW_HOME's config and workspace, and a gateway from an empty folder finds them", async () => {
    const home = path.join(tempDir(), "home");
    const made = await cli(["onboard"], { PICOCLAW_HOME: home }, tempDir());
    expect(made.code).toBe(0);
    for (const file of ["config.json", "workspace/AGENT.md", "workspace/SOUL.md", "workspace/USER.md", "workspace/memory/MEMORY.md"]) {
      expect(made.out).toContain(`created ${path.join(home, file)}`);
    }
    const agents = await cli(["agents"], { PICOCLAW_HOME: home }, tempDir());
    expect(agents.code).toBe(0);
    expect(agents.out).toMatch(/^main\s+local\s+\S+\s+Assistant$/m);
    const turn = await cli(["agent", "-m", "hello"], { PICOCLAW_HOME: home }, tempDir());
    expect(turn.code).toBe(0);
  });

  it("never overwrites a file: a second onboard keeps everything, an edited SOUL.md stays as the user wrote it", async () => {
    const home = path.join(tempDir(), "home");
    await cli(["onboard"], { PICOCLAW_HOME: home }, tempDir());
    writeFileSync(path.join(home, "workspace", "SOUL.md"), "my own soul");
    writeFileSync(path.join(home, "config.json"), '{"agents":{"defaults":{"max_tool_iterations":7}}}');
    const again = await cli(["onboard"], { PICOCLAW_HOME: home }, tempDir());
    expect(again.code).toBe(0);
    expect(again.out).not.toContain("created");
    expect(again.out).toContain(`kept    ${path.join(home, "workspace", "SOUL.md")} (it exists; not changed)`);
    expect(readFileSync(path.join(home, "workspace", "SOUL.md"), "utf8")).toBe("my own soul");
    expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe('{"agents":{"defaults":{"max_tool_iterations":7}}}');
  });

  it("fills in what is missing of an existing PicoClaw home, leaving PicoClaw's files alone", async () => {
    const { home, picoclaw } = picoclawUser();
    const soul = readFileSync(path.join(picoclaw, "workspace", "SOUL.md"), "utf8");
    const config = readFileSync(path.join(picoclaw, "config.json"), "utf8");
    const made = await cli(["onboard"], { HOME: home }, tempDir());
    expect(made.code).toBe(0);
    expect(made.out.split("\n").filter((l) => l.startsWith("created"))).toEqual([]);
    expect(readFileSync(path.join(picoclaw, "workspace", "SOUL.md"), "utf8")).toBe(soul);
    expect(readFileSync(path.join(picoclaw, "config.json"), "utf8")).toBe(config);
  });

  it("without PICOCLAW_HOME or HOME says what to set (exit 2)", async () => {
    const made = await cli(["onboard"], {}, tempDir());
    expect(made).toMatchObject({ code: 2, err: "picoclaw: onboard: set PICOCLAW_HOME (or HOME) to say where the home folder goes" });
  });
});
