/**
 * Skills in the system prompt, as the model receives it: SKILL.md folders of
 * the workspace, $PICOCLAW_HOME/skills and the built-in folder, the first of
 * a name winning; a skill dropped into the workspace shows in the next turn;
 * a bad SKILL.md is a warning naming it, never a failed start; AGENT.md
 * `skills:` filters; the list stays within its budget; the operator's skill
 * folders are readable by read_file (the model reads a skill's body there),
 * a workspace's SKILL.md that links out is not followed. Also the two skills
 * the package ships.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { PACKAGE_SKILLS_DIR } from "../../src/bootstrap.js";
import { readSkillHead } from "../../src/features/skills/skill-file.js";
import { filesFeature } from "../../src/features/files/feature.js";
import { skillsFeature } from "../../src/features/skills/feature.js";
import { SkillFolders } from "../../src/features/skills/skill-folders.js";
import { Workspace } from "../../src/workspace/workspace.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { recordingLogger, tempDir } from "../support/project.js";

function skill(root: string, folder: string, text: string): string {
  mkdirSync(path.join(root, folder), { recursive: true });
  const file = path.join(root, folder, "SKILL.md");
  writeFileSync(file, text);
  return file;
}

const md = (name: string, description: string, body = "Do it well.") => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\n${body}\n`;

function setup(opts: { config?: Record<string, unknown>; frontmatter?: string } = {}) {
  const base = tempDir();
  const workspace = path.join(base, "workspace");
  const home = path.join(base, "home");
  const builtin = path.join(base, "builtin");
  mkdirSync(workspace, { recursive: true });
  const agent = {
    ...readAgent("main", "agents/main/AGENT.md", `---\nname: Main\n${opts.frontmatter ?? ""}---\nYou are the body.`, skillsFeature.frontmatter).agent,
    workspace,
  };
  const model = new ControlledModel();
  const logger = recordingLogger();
  const runtime = new Runtime({
    config: builtinConfigSchema().parse(opts.config ?? {}),
    agents: new Map([["main", agent]]),
    models: single(model),
    features: [skillsFeature, filesFeature],
    locations: { home, builtinSkills: builtin },
    logger,
  });
  /** One turn; the system prompt the model got, and the turn's tool results when `calls` scripts some. */
  const turn = async (calls: { name: string; arguments: unknown }[] = []) => {
    const answer = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "hi" });
    const first = (await model.calls(model.pending.length + 1)).at(-1)!;
    const system = first.request.messages[0]!.content as string;
    if (calls.length === 0) {
      first.resolve({ text: "ok" });
      await answer;
      return { system, results: [] as string[] };
    }
    first.resolve({
      toolCalls: calls.map((c, i) => ({ id: `c${i}`, type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
    });
    const second = (await model.calls(model.pending.length + 1)).at(-1)!;
    const results = second.request.messages.filter((m) => m.role === "tool").map((m) => m.content as string);
    second.resolve({ text: "ok" });
    await answer;
    return { system, results };
  };
  return { workspace, home, builtin, runtime, logger, turn };
}

describe("skills in the system prompt", () => {
  it("lists the workspace's, the home's and the built-in skills, the first of a name winning, each with its location and source", async () => {
    const { workspace, home, builtin, runtime, turn } = setup();
    const mine = skill(path.join(workspace, "skills"), "deploy", md("deploy", "Ship the app to production."));
    const theirs = skill(path.join(home, "skills"), "review", md("review", "Review a pull request & say <what> matters."));
    skill(path.join(home, "skills"), "deploy-copy", md("deploy", "A second deploy, shadowed."));
    const shipped = skill(builtin, "haiku", md("haiku", "Answer in a haiku."));
    const { system } = await turn();
    expect(system).toContain("# Skills");
    const lines = system.split("\n").filter((line) => line.startsWith("<skill>"));
    expect(lines).toEqual([
      `<skill><name>deploy</name><description>Ship the app to production.</description><location>${mine}</location><source>workspace</source></skill>`,
      `<skill><name>review</name><description>Review a pull request &amp; say &lt;what&gt; matters.</description><location>${theirs}</location><source>global</source></skill>`,
      `<skill><name>haiku</name><description>Answer in a haiku.</description><location>${shipped}</location><source>builtin</source></skill>`,
    ]);
    // The same text while the skills are the same (prompt caching).
    expect((await turn()).system).toBe(system);
    await runtime.close();
  });

  it("a skill dropped into the workspace's skills/ appears in the next turn's prompt", async () => {
    const { workspace, runtime, turn } = setup();
    expect((await turn()).system).not.toContain("# Skills");
    skill(path.join(workspace, "skills"), "brew", md("brew", "Brew tea properly."));
    expect((await turn()).system).toContain("<name>brew</name>");
    await runtime.close();
  });

  it("a workspace's skills folder is not listed again while nothing in it changed; a skill added, edited or removed is seen at the next ask", async () => {
    const root = path.join(tempDir(), "workspace");
    const workspace = await Workspace.open({ root, restrict: true, readOutside: false, readPaths: [], writePaths: [] });
    let listed = 0;
    const list = workspace.list.bind(workspace);
    workspace.list = (input) => {
      listed++;
      return list(input);
    };
    // A clock well past every file's times: what is unchanged counts as settled at once.
    const folders = new SkillFolders(
      100,
      () => {},
      () => Date.now() + 60_000,
    );
    const names = async () => (await folders.ofWorkspace(workspace)).map((s) => `${s.name}: ${s.description}`);
    expect(await names()).toEqual([]);
    expect(await names()).toEqual([]);
    expect(listed).toBe(1);

    const file = skill(path.join(root, "skills"), "brew", md("brew", "Brew tea properly."));
    expect(await names()).toEqual(["brew: Brew tea properly."]);
    expect(await names()).toEqual(["brew: Brew tea properly."]);
    expect(listed).toBe(2);

    writeFileSync(file, md("brew", "Brew tea slowly!!"));
    utimesSync(file, 1_000_000, 1_000_000);
    expect(await names()).toEqual(["brew: Brew tea slowly!!"]);
    rmSync(path.join(root, "skills", "brew"), { recursive: true });
    expect(await names()).toEqual([]);
  });

  it("a workspace made a moment ago without a skills folder is listed once, not every turn, though files are written beside skills/", async () => {
    const root = path.join(tempDir(), "workspace");
    const workspace = await Workspace.open({ root, restrict: true, readOutside: false, readPaths: [], writePaths: [] });
    writeFileSync(path.join(root, "notes.md"), "a tool's file");
    let listed = 0;
    const list = workspace.list.bind(workspace);
    workspace.list = (input) => {
      listed++;
      return list(input);
    };
    const folders = new SkillFolders(100, () => {});
    expect(await folders.ofWorkspace(workspace)).toEqual([]);
    writeFileSync(path.join(root, "more.md"), "another");
    expect(await folders.ofWorkspace(workspace)).toEqual([]);
    expect(await folders.ofWorkspace(workspace)).toEqual([]);
    expect(listed).toBe(1);
    skill(path.join(root, "skills"), "brew", md("brew", "Brew tea properly."));
    expect((await folders.ofWorkspace(workspace)).map((s) => s.name)).toEqual(["brew"]);
  });

  it("a SKILL.md that is not a skill is skipped with a warning naming the file, once; the others stay", async () => {
    const { workspace, runtime, logger, turn } = setup();
    const bad = skill(path.join(workspace, "skills"), "broken", "---\nname: not a name!\ndescription: x\n---\nbody");
    const unclosed = skill(path.join(workspace, "skills"), "open", "---\nname: open\n");
    skill(path.join(workspace, "skills"), "fine", md("fine", "Works."));
    const { system } = await turn();
    expect(system).toContain("<name>fine</name>");
    expect(system).not.toContain("broken");
    await turn();
    const warnings = logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings.filter((w) => w.startsWith(bad))).toEqual([
      `${bad}: not a skill: its name "not a name!" is not a skill name (letters and digits in groups joined by -, at most 64 characters); skipped`,
    ]);
    expect(warnings.filter((w) => w.startsWith(unclosed))).toHaveLength(1);
    await runtime.close();
  });

  it("AGENT.md skills: keeps only the skills it names; skills: [] none", async () => {
    const named = setup({ frontmatter: "skills: [deploy]\n" });
    skill(path.join(named.workspace, "skills"), "deploy", md("deploy", "Ship it."));
    skill(path.join(named.workspace, "skills"), "review", md("review", "Review it."));
    const { system } = await named.turn();
    expect(system).toContain("<name>deploy</name>");
    expect(system).not.toContain("<name>review</name>");
    await named.runtime.close();
    const none = setup({ frontmatter: "skills: []\n" });
    skill(path.join(none.workspace, "skills"), "deploy", md("deploy", "Ship it."));
    expect((await none.turn()).system).not.toContain("# Skills");
    await none.runtime.close();
  });

  it("stays within tools.skills.max_prompt_bytes, counting the skills left out", async () => {
    const { workspace, runtime, turn } = setup({ config: { tools: { skills: { max_prompt_bytes: 1024 } } } });
    for (let i = 0; i < 20; i++) skill(path.join(workspace, "skills"), `s${i}`, md(`skill-${String(i).padStart(2, "0")}`, "x".repeat(80)));
    const { system } = await turn();
    const section = system.slice(system.indexOf("# Skills"));
    expect(Buffer.byteLength(section)).toBeLessThan(1024 + 256);
    const listed = section.split("\n").filter((line) => line.startsWith("<skill>")).length;
    expect(listed).toBeGreaterThan(0);
    expect(section).toContain(`[${20 - listed} more skills not listed: over tools.skills.max_prompt_bytes]`);
    await runtime.close();
  });

  it("read_file reads a skill of the operator's folders (outside the workspace), and nothing else there; a workspace SKILL.md linking out is not followed", async () => {
    const { workspace, home, runtime, turn } = setup();
    const theirs = skill(path.join(home, "skills"), "review", md("review", "Review a pull request.", "Step one: read the diff."));
    writeFileSync(path.join(path.dirname(home), "secret.txt"), "not yours");
    mkdirSync(path.join(workspace, "skills", "sneaky"), { recursive: true });
    symlinkSync(path.join(path.dirname(home), "secret.txt"), path.join(workspace, "skills", "sneaky", "SKILL.md"));
    const { system, results } = await turn([
      { name: "read_file", arguments: { path: theirs } },
      { name: "read_file", arguments: { path: path.join(path.dirname(home), "secret.txt") } },
    ]);
    expect(system).not.toContain("sneaky");
    expect(results[0]).toContain("Step one: read the diff.");
    expect(results[1]).toMatch(/outside|not allowed|refused/i);
    expect(results[1]).not.toContain("not yours");
    await runtime.close();
  });

  it("tools.skills.enabled false lists none", async () => {
    const { workspace, runtime, turn } = setup({ config: { tools: { skills: { enabled: false } } } });
    skill(path.join(workspace, "skills"), "deploy", md("deploy", "Ship it."));
    expect((await turn()).system).not.toContain("# Skills");
    await runtime.close();
  });
});

describe("SKILL.md as PicoClaw reads it", () => {
  it("takes JSON or YAML frontmatter; without one, the folder's name (or a first heading that is a name) and the first paragraph", () => {
    expect(readSkillHead('---\n{"name": "json-skill", "description": "From JSON."}\n---\nbody', "dir")).toEqual({
      name: "json-skill",
      description: "From JSON.",
    });
    expect(readSkillHead("# heading-name\n\nThe first\nparagraph.\n\nMore.", "dir")).toEqual({ name: "heading-name", description: "The first paragraph." });
    expect(readSkillHead("# Not A Name\n\nWhat it does.", "my-dir")).toEqual({ name: "my-dir", description: "What it does." });
    expect(readSkillHead("---\nname: x\n---\n", "dir")).toEqual({ problem: "it has no description (frontmatter description, or a first paragraph)" });
    expect(readSkillHead(`---\nname: long\ndescription: ${"d".repeat(1025)}\n---\n`, "dir")).toEqual({
      problem: "its description is 1025 characters, more than 1024",
    });
  });
});

describe("the skills the package ships", () => {
  it("are valid skills, each with a name and a description", () => {
    const folders = readdirSync(PACKAGE_SKILLS_DIR);
    expect(folders.sort()).toEqual(["plan-with-todo", "summarise-web-page"]);
    for (const folder of folders) {
      const head = readSkillHead(readFileSync(path.join(PACKAGE_SKILLS_DIR, folder, "SKILL.md"), "utf8"), folder);
      expect(head, folder).toMatchObject({ name: folder });
    }
  });
});
