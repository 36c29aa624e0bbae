import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadAgentCatalog, readAgent } from "../../src/agents/catalog.js";
import { parseAgentFile } from "../../src/agents/frontmatter.js";
import { ToolPolicy } from "../../src/agents/policy.js";
import { builtinConfigSchema } from "../../src/house.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { writeProject } from "../support/project.js";
import { echoTool, offTool, whisperTool } from "../support/tools.js";

const configSchema = builtinConfigSchema();

describe("AGENT.md frontmatter", () => {
  it("reads name, description, model and the tool allowlist; the body is the system prompt", () => {
    const { agent, warnings } = readAgent(
      "researcher",
      "agents/researcher/AGENT.md",
      "---\nname: Researcher\ndescription: Finds sources\nmodel: gpt   # a model_name\ntools: [todo, subagent]\n---\nYou are careful.\n\nSecond paragraph.\n",
    );
    expect(warnings).toEqual([]);
    expect(agent).toEqual({
      id: "researcher",
      name: "Researcher",
      description: "Finds sources",
      model: "gpt",
      tools: ["todo", "subagent"],
      allowAgents: [],
      settings: {},
      prompt: "You are careful.\n\nSecond paragraph.",
      file: "agents/researcher/AGENT.md",
    });
  });

  it("no tools key means every enabled tool; tools: [] means none", () => {
    expect(readAgent("a", "f", "---\nname: A\n---\nhi").agent.tools).toBeNull();
    expect(readAgent("a", "f", "---\ntools: []\n---\nhi").agent.tools).toEqual([]);
    expect(readAgent("a", "f", "---\ntools:\n---\nhi").agent.tools).toEqual([]);
  });

  it("a file without frontmatter is all prompt, named by its id", () => {
    const { agent, warnings } = readAgent("plain", "f", "Just a prompt.\n");
    expect(warnings).toEqual([]);
    expect(agent).toMatchObject({ name: "plain", tools: null, prompt: "Just a prompt." });
  });

  it.each([
    ["broken YAML", "---\nname: [unclosed\ntools: [todo]\n---\nbody", /YAML/],
    ["an unclosed block", "---\nname: A\ntools: [todo]\nbody without end", /not closed/],
    ["a list instead of a mapping", "---\n- todo\n---\nbody", /must be a YAML mapping/],
    ["tools as a string", "---\ntools: todo\n---\nbody", /tools: expected array, received string/],
    ["duplicate keys", "---\ntools: []\ntools: [todo]\n---\nbody", /YAML/],
  ])("%s fails closed: the agent loads with no tools and a warning names the file", (_case, text, why) => {
    const { agent, warnings } = readAgent("x", "agents/x/AGENT.md", text);
    expect(agent.tools).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^agents\/x\/AGENT\.md: frontmatter does not parse, so agent "x" gets no tools: /);
    expect(warnings[0]).toMatch(why);
  });

  it("unknown frontmatter keys are a warning, not a failure", () => {
    const parsed = parseAgentFile("---\nname: A\ncolour: blue\ntools: [todo]\n---\nbody");
    expect(parsed.problems).toEqual([]);
    expect(parsed.notes).toEqual(['unknown frontmatter key "colour" ignored']);
    expect(parsed.frontmatter?.tools).toEqual(["todo"]);
  });

  it("a feature's frontmatter keys are checked by its schema: a good value lands in settings, a bad one fails the agent closed", () => {
    const keys = { todo_style: z.enum(["list", "phases"]) };
    const good = readAgent("p", "agents/p/AGENT.md", "---\ntodo_style: phases\ntools: [todo]\n---\nPlan.", keys);
    expect(good.agent.settings).toEqual({ todo_style: "phases" });
    expect(good.agent.tools).toEqual(["todo"]);
    expect(good.warnings).toEqual([]);
    const bad = readAgent("p", "agents/p/AGENT.md", "---\ntodo_style: kanban\ntools: [todo]\n---\nPlan.", keys);
    expect(bad.agent.tools).toEqual([]);
    expect(bad.agent.settings).toEqual({});
    expect(bad.warnings).toEqual(['agents/p/AGENT.md: frontmatter does not parse, so agent "p" gets no tools: todo_style: expected one of "list", "phases"']);
    // Without the feature, the key is unknown: a warning, not a failure.
    expect(readAgent("p", "agents/p/AGENT.md", "---\ntodo_style: phases\n---\nPlan.").warnings).toEqual([
      'agents/p/AGENT.md: unknown frontmatter key "todo_style" ignored',
    ]);
  });

  it("handles CRLF line endings and a byte-order mark", () => {
    const { agent } = readAgent("a", "f", "\uFEFF---\r\nname: A\r\ntools: [echo]\r\n---\r\nPrompt\r\n");
    expect(agent).toMatchObject({ name: "A", tools: ["echo"], prompt: "Prompt" });
  });
});

describe("agents catalog", () => {
  it("loads agents/<id>/AGENT.md, skips invalid ids and folders without AGENT.md", () => {
    const dir = writeProject({
      agents: { main: "---\nname: Main\n---\nhi", "bad-yaml": "---\nname: [\n---\nprompt", Upper: "x", "-dash": "x" },
      files: { "agents/empty/notes.txt": "x", "agents/stray.md": "x" },
    });
    const catalog = loadAgentCatalog(path.join(dir, "agents"));
    expect([...catalog.agents.keys()]).toEqual(["bad-yaml", "main"]);
    expect(catalog.agents.get("bad-yaml")!.tools).toEqual([]);
    expect(catalog.warnings).toHaveLength(4);
    expect(catalog.warnings.join("\n")).toMatch(/"-dash" is not a valid agent id/);
    expect(catalog.warnings.join("\n")).toMatch(/"Upper" is not a valid agent id/);
    expect(catalog.warnings.join("\n")).toMatch(/empty: no AGENT\.md; skipped/);
    expect(catalog.warnings.join("\n")).toMatch(/bad-yaml[/\\]AGENT\.md: frontmatter does not parse/);
  });

  it("a missing folder is a warning, not a crash", () => {
    const catalog = loadAgentCatalog("/no/such/agents");
    expect(catalog.agents.size).toBe(0);
    expect(catalog.warnings[0]).toMatch(/agents folder not found/);
  });

  it("the shipped agents load cleanly", () => {
    const catalog = loadAgentCatalog(path.resolve(import.meta.dirname, "..", "..", "agents"));
    expect([...catalog.agents.keys()]).toEqual(expect.arrayContaining(["main", "planner"]));
    expect(catalog.warnings).toEqual([]);
    expect(catalog.agents.get("main")!.prompt).toMatch(/todo/);
    expect(catalog.agents.get("planner")!.tools).toEqual(["todo"]);
  });
});

describe("effective tool policy", () => {
  const registry = new ToolRegistry([echoTool, whisperTool, offTool]);
  const policy = new ToolPolicy(registry, configSchema.parse({}).tools);
  const agent = (tools: string[] | null) => ({ ...readAgent("a", "f", "x").agent, tools });

  it("is enabled-in-config ∩ allowlist, sorted", () => {
    expect(policy.effectiveToolNames(agent(null))).toEqual(["echo", "whisper"]);
    expect(policy.effectiveToolNames(agent(["whisper", "off", "nope"]))).toEqual(["whisper"]);
    expect(policy.effectiveToolNames(agent([]))).toEqual([]);
  });

  it("the model is shown exactly the tools that may run", () => {
    const set = policy.toolSet({ ...agent(["echo"]), id: "only-echo" });
    expect(set.specs().map((s) => s.name)).toEqual(["echo"]);
    expect(set.has("echo")).toBe(true);
    expect(set.has("whisper")).toBe(false);
  });

  it("warns for allowlisted names that are not known tools", () => {
    expect(policy.allowlistWarnings([{ ...agent(["echo", "nope"]), file: "agents/a/AGENT.md" }])).toEqual([
      'agents/a/AGENT.md: tools lists "nope", which is not a known tool; ignored',
    ]);
  });
});
