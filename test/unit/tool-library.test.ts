/**
 * The web tool library's routes through the real app (`app.request()`):
 * `GET /v1/tools` and `PUT /v1/tools/<name>/state`, the config file they
 * write, and the next turn (the built-in model calls what the message
 * says, so its reply shows whether the tool was offered).
 */
import { chmodSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onTestFinished, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/bootstrap.js";
import { ConfigFile, configFileOf, withToolSwitch } from "../../src/config/config-file.js";
import { createApp } from "../../src/gateway/app.js";
import { loadConfig } from "../../src/house.js";
import { type Harness, harness, jsonOf, recordingLogger, tempDir, writeProject } from "../support/project.js";
import { echoTool, offTool } from "../support/tools.js";

const put = (h: Pick<Harness, "request">, name: string, body: unknown, headers: Record<string, string> = {}) =>
  h.request(`/v1/tools/${name}/state`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const toolsOf = async (h: Pick<Harness, "request">, headers: Record<string, string> = {}) =>
  (await jsonOf(await h.request("/v1/tools", { headers }))).tools as Record<string, unknown>[];

const configText = (h: Harness) => readFileSync(path.join(h.dir, "picoclaw.config.json"), "utf8");

/** What the built-in model answers for a todo read: the tool's answer when offered, the runtime's refusal when not. */
const READ_TODO = 'CALL todo {"action":"read"}';
// The built-in model summarises a JSON result as a code block.
const OFFERED = '1. todo:\n   ```json\n   {\n     "todos": [],\n     "total_count": 0,\n     "message": "Retrieved 0 todos"\n   }\n   ```';
const NOT_OFFERED = 'todo (error): tool "todo" is not available to this agent';

describe("GET /v1/tools", () => {
  it("lists every tool with its origin, whether it is on, what says so, the agents offered it and its approval policy", async () => {
    const h = harness({
      config: { tools: { todo: { enabled: true }, off: { enabled: true, approval: "ask" } } },
      tools: [echoTool, offTool],
      agents: {
        main: "---\nname: Main\napproval:\n  echo: deny\n---\nYou help.",
        narrow: "---\nname: Narrow\ntools: [todo]\n---\nYou plan.",
      },
    });
    const tools = await toolsOf(h);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get("todo")).toEqual({
      name: "todo",
      origin: "the built-in tools",
      enabled: true,
      source: "config",
      agents: ["main", "narrow"],
      approval: "allow",
    });
    expect(byName.get("exec")).toEqual({ name: "exec", origin: "the built-in tools", enabled: true, source: "default", agents: ["main"], approval: "ask" });
    // The embedder's tools: one on by its own default (denied to main by its AGENT.md), one switched on by the file.
    expect(byName.get("echo")).toEqual({
      name: "echo",
      origin: "the embedding program",
      enabled: true,
      source: "default",
      agents: [],
      approval: "allow",
      agent_approvals: { main: "deny" },
    });
    expect(byName.get("off")).toEqual({ name: "off", origin: "the embedding program", enabled: true, source: "config", agents: ["main"], approval: "ask" });
    expect(tools.map((tool) => tool.name)).toEqual([...tools.map((tool) => tool.name)].sort());
  });

  it("a tool an environment variable switches says so, naming the variable (a built-in tool's, and another tool's)", async () => {
    const h = harness({
      config: { tools: { todo: { enabled: false } } },
      env: { PICOCLAW_TOOLS_TODO_ENABLED: "true", PICOCLAW_TOOLS_ECHO_ENABLED: "0" },
      tools: [echoTool],
    });
    const byName = new Map((await toolsOf(h)).map((tool) => [tool.name, tool]));
    expect(byName.get("todo")).toMatchObject({ enabled: true, source: "env", env_var: "PICOCLAW_TOOLS_TODO_ENABLED", agents: ["main"] });
    expect(byName.get("echo")).toMatchObject({ enabled: false, source: "env", env_var: "PICOCLAW_TOOLS_ECHO_ENABLED", agents: [] });
  });

  it("is behind the gateway's token", async () => {
    const h = harness({ token: "tok-123" });
    expect((await h.request("/v1/tools")).status).toBe(401);
    expect((await h.request("/v1/tools", { headers: { authorization: "Bearer tok-123" } })).status).toBe(200);
  });
});

describe("PUT /v1/tools/<name>/state", () => {
  it("switches todo on: the file says so, the next turn offers it (a subagent's too) and /v1/agents lists it", async () => {
    const h = harness({ config: { tools: { todo: { enabled: false } } } });
    expect((await h.chat({ message: READ_TODO })).json.reply).toContain(NOT_OFFERED);

    const res = await put(h, "todo", { enabled: true });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({
      tool: { name: "todo", origin: "the built-in tools", enabled: true, source: "config", agents: ["main"], approval: "allow" },
      config_file: path.join(h.dir, "picoclaw.config.json"),
      written: true,
    });
    expect(JSON.parse(configText(h)).tools.todo).toEqual({ enabled: true });

    expect((await h.chat({ message: READ_TODO })).json.reply).toContain(OFFERED);
    const child = await h.chat({ message: `CALL subagent ${JSON.stringify({ task: READ_TODO })}` });
    expect(child.json.reply).toContain(`finished. Its answer:\n\nRan 1 tool call:\n${OFFERED}`);
    const agents = await jsonOf(await h.request("/v1/agents"));
    expect(agents.agents[0].tools).toContain("todo");

    // And off again: the next turn is refused it.
    expect((await put(h, "todo", { enabled: false })).status).toBe(200);
    expect((await h.chat({ message: READ_TODO })).json.reply).toContain(NOT_OFFERED);
    expect((await jsonOf(await h.request("/v1/agents"))).agents[0].tools).not.toContain("todo");
  });

  it("switches another tool than a built-in one (the section of a tool the gateway does not ship)", async () => {
    const h = harness({ tools: [echoTool] });
    expect((await put(h, "echo", { enabled: false })).status).toBe(200);
    expect(JSON.parse(configText(h)).tools.echo).toEqual({ enabled: false });
    const echo = (await toolsOf(h)).find((tool) => tool.name === "echo");
    expect(echo).toMatchObject({ enabled: false, source: "config", agents: [] });
  });

  it("is refused with 409 naming the variable when an environment variable switches the tool, and nothing changes", async () => {
    const h = harness({ config: { tools: { todo: { enabled: false } } }, env: { PICOCLAW_TOOLS_TODO_ENABLED: "false" }, tools: [echoTool] });
    const before = configText(h);
    const res = await put(h, "todo", { enabled: true });
    expect(res.status).toBe(409);
    const body = await jsonOf(res);
    expect(body.error.code).toBe("tool_locked");
    expect(body.error.message).toContain("PICOCLAW_TOOLS_TODO_ENABLED");
    expect(configText(h)).toBe(before);
    expect((await h.chat({ message: READ_TODO })).json.reply).toContain(NOT_OFFERED);
  });

  it("an unknown tool is 404, a bad body 400, a missing token 401: each changes nothing", async () => {
    const h = harness({ token: "tok-123" });
    const auth = { authorization: "Bearer tok-123" };
    const before = configText(h);
    const unknown = await put(h, "no_such_tool", { enabled: true }, auth);
    expect(unknown.status).toBe(404);
    expect((await jsonOf(unknown)).error).toEqual({ code: "tool_not_found", message: 'there is no tool named "no_such_tool"' });
    for (const bad of [{}, { enabled: "yes" }, { enabled: true, style: "phases" }, "[]"]) {
      const res = await put(h, "todo", bad, auth);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await jsonOf(res)).error.code).toBe("invalid_request");
    }
    expect((await put(h, "todo", "{not json", auth)).status).toBe(400);
    expect((await put(h, "todo", { enabled: true })).status).toBe(401);
    expect(configText(h)).toBe(before);
    expect((await toolsOf(h, auth)).find((tool) => tool.name === "todo")).toMatchObject({ enabled: false, source: "default" });
  });

  it("keeps every other byte of the file, and replaces it whole (a new file renamed over it, its mode kept, no temporary file left)", async () => {
    const text =
      '{\n    "$schema": "./config/picoclaw.schema.json",\n    "agents": {"defaults": {"max_tool_iterations": 7}},\n    "tools": {\n        "exec": {"enabled": false},\n        "todo": {\n            "style": "phases"\n        }\n    },\n    "gateway": {"port": 18790}\n}\n';
    const h = harness({ config: text });
    const file = path.join(h.dir, "picoclaw.config.json");
    chmodSync(file, 0o640);
    const inode = statSync(file).ino;

    expect((await put(h, "todo", { enabled: true })).status).toBe(200);
    const written = configText(h);
    // The only difference from the user's file is the inserted key.
    expect(written).toBe(
      '{\n    "$schema": "./config/picoclaw.schema.json",\n    "agents": {"defaults": {"max_tool_iterations": 7}},\n    "tools": {\n        "exec": {"enabled": false},\n        "todo": {\n            "style": "phases",\n            "enabled": true\n        }\n    },\n    "gateway": {"port": 18790}\n}\n',
    );
    expect(statSync(file).ino).not.toBe(inode);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(h.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);

    // A value the file has is replaced in place: its characters only.
    expect((await put(h, "exec", { enabled: true })).status).toBe(200);
    expect(configText(h)).toBe(written.replace('"exec": {"enabled": false}', '"exec": {"enabled": true}'));
    // Saying what the file says already writes nothing.
    const again = await put(h, "exec", { enabled: true });
    expect(await jsonOf(again)).toMatchObject({ written: false });
  });

  it("switches sent at once all land in the file (they run one at a time)", async () => {
    const h = harness({ config: { tools: {} } });
    const names = ["todo", "exec", "spawn", "cron", "web_fetch", "list_dir"];
    const answers = await Promise.all(names.map((name, i) => put(h, name, { enabled: i % 2 === 0 })));
    expect(answers.map((res) => res.status)).toEqual(names.map(() => 200));
    const tools = JSON.parse(configText(h)).tools;
    expect(Object.fromEntries(names.map((name) => [name, tools[name].enabled]))).toEqual(Object.fromEntries(names.map((name, i) => [name, i % 2 === 0])));
  });

  it("reads the file as it is now: the user's edits made since start-up stay", async () => {
    const h = harness({ config: { tools: {} } });
    const edited = '{\n  "agents": {"defaults": {"max_tool_iterations": 9}},\n  "tools": {}\n}\n';
    writeFileSync(path.join(h.dir, "picoclaw.config.json"), edited);
    expect((await put(h, "todo", { enabled: true })).status).toBe(200);
    expect(configText(h)).toBe('{\n  "agents": {"defaults": {"max_tool_iterations": 9}},\n  "tools": {"todo": {"enabled": true}}\n}\n');
  });

  it("a file that would no longer load is not written: 409 names the problem, and the tool stays as it was", async () => {
    const h = harness({ config: { tools: {} } });
    const broken = '{\n  "gateway": {"port": "eighty"},\n  "tools": {}\n}\n';
    writeFileSync(path.join(h.dir, "picoclaw.config.json"), broken);
    const res = await put(h, "todo", { enabled: true });
    expect(res.status).toBe(409);
    const { error } = await jsonOf(res);
    expect(error.code).toBe("config_not_written");
    expect(error.message).toContain("gateway.port");
    expect(error.message).not.toContain(".tmp");
    expect(configText(h)).toBe(broken);
    expect(readdirSync(h.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect((await h.chat({ message: READ_TODO })).json.reply).toContain(NOT_OFFERED);

    writeFileSync(path.join(h.dir, "picoclaw.config.json"), '{"tools": {,}}');
    const notJson = await put(h, "todo", { enabled: true });
    expect(notJson.status).toBe(409);
    expect((await jsonOf(notJson)).error.message).toContain("not valid JSON");
  });

  it("with no config file, the first switch makes picoclaw.config.json in the project folder", async () => {
    const dir = writeProject({});
    const loaded = loadConfig({ env: {}, cwd: dir });
    expect(loaded.file).toBeNull();
    const { runtime } = bootstrap(loaded, { logger: recordingLogger() });
    onTestFinished(() => runtime.close(0));
    const app = createApp(runtime, { configFile: configFileOf(loaded) });
    const res = await put({ request: async (p, init) => app.request(p, init) }, "todo", { enabled: true });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ config_file: path.join(dir, "picoclaw.config.json"), written: true });
    expect(readFileSync(path.join(dir, "picoclaw.config.json"), "utf8")).toBe('{\n  "tools": {\n    "todo": {\n      "enabled": true\n    }\n  }\n}\n');
    expect(statSync(path.join(dir, "picoclaw.config.json")).mode & 0o777).toBe(0o600);
    // The next one edits that file.
    await put({ request: async (p, init) => app.request(p, init) }, "exec", { enabled: false });
    expect(JSON.parse(readFileSync(path.join(dir, "picoclaw.config.json"), "utf8")).tools).toEqual({ todo: { enabled: true }, exec: { enabled: false } });
  });

  it("edits PicoClaw's $PICOCLAW_HOME/config.json when that is the file the gateway loaded, in its own form", async () => {
    const project = tempDir();
    const home = path.join(project, "home");
    const picoclaw =
      '{\n  "_comment": "PicoClaw\'s config",\n  "version": 1,\n  "agents": {"defaults": {"model": "local"}},\n  "tools": {\n    "todo": {"enabled": false}\n  }\n}\n';
    writeProject({ files: { "home/config.json": picoclaw, "home/workspace/AGENT.md": "You help." }, agents: {} }, project);
    const loaded = loadConfig({ env: { PICOCLAW_HOME: home }, cwd: project });
    expect(loaded.file).toBe(path.join(home, "config.json"));
    const { runtime } = bootstrap(loaded, { logger: recordingLogger() });
    onTestFinished(() => runtime.close(0));
    const app = createApp(runtime, { configFile: configFileOf(loaded) });
    const res = await put({ request: async (p, init) => app.request(p, init) }, "todo", { enabled: true });
    expect(res.status).toBe(200);
    expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe(picoclaw.replace('"todo": {"enabled": false}', '"todo": {"enabled": true}'));
  });

  it("an app made without a config file to write refuses a switch with 409", async () => {
    const h = harness();
    const { runtime } = h;
    const app = createApp(runtime);
    const res = await put({ request: async (p, init) => app.request(p, init) }, "todo", { enabled: true });
    expect(res.status).toBe(409);
    expect((await jsonOf(res)).error.code).toBe("config_not_written");
  });
});

describe("the config file's edit", () => {
  const set = (text: string, name = "todo", enabled = true) => withToolSwitch(text, name, enabled, "picoclaw.config.json");

  it("inserts the key in the file's own indentation and line ends, and keeps a byte-order mark", async () => {
    expect(await set('{\n\t"tools": {\n\t\t"exec": {"enabled": false}\n\t}\n}\n')).toBe(
      '{\n\t"tools": {\n\t\t"exec": {"enabled": false},\n\t\t"todo": {\n\t\t\t"enabled": true\n\t\t}\n\t}\n}\n',
    );
    expect(await set('{\r\n  "gateway": {"port": 1}\r\n}\r\n')).toBe(
      '{\r\n  "gateway": {"port": 1},\r\n  "tools": {\r\n    "todo": {\r\n      "enabled": true\r\n    }\r\n  }\r\n}\r\n',
    );
    expect(await set('\uFEFF{\n  "tools": {"todo": {"enabled": false}}\n}\n')).toBe('\uFEFF{\n  "tools": {"todo": {"enabled": true}}\n}\n');
  });

  it("in a section on one line, inserts inline, spaced as the section is", async () => {
    expect(await set('{\n  "tools": {"exec": {"enabled": false}}\n}\n')).toBe('{\n  "tools": {"exec": {"enabled": false}, "todo": {"enabled": true}}\n}\n');
    expect(await set('{\n  "tools": {}\n}\n')).toBe('{\n  "tools": {"todo": {"enabled": true}}\n}\n');
    expect(await set('{"tools":{"exec":{"enabled":false}},"gateway":{"port":1}}')).toBe(
      '{"tools":{"exec":{"enabled":false},"todo":{"enabled":true}},"gateway":{"port":1}}',
    );
  });

  it("refuses what it cannot edit without guessing: JSON with comments, tools that is no object, a key written twice", async () => {
    await expect(set('{\n  // mine\n  "tools": {}\n}')).rejects.toThrow(/not valid JSON now/);
    await expect(set('{"tools": 5}')).rejects.toThrow(/tools is not an object/);
    await expect(set('{"tools": {"todo": null}}')).rejects.toThrow(/tools\.todo is not an object/);
    await expect(set('{"tools": {"todo": {"enabled": false}}, "tools": {}}')).rejects.toThrow(/more than once/);
  });

  it("a user's edit that lands while a change is being made is kept: the change is made again on it", async () => {
    const dir = tempDir();
    const file = path.join(dir, "picoclaw.config.json");
    writeFileSync(file, '{\n  "tools": {}\n}\n');
    let checks = 0;
    const config = new ConfigFile({
      file,
      create: file,
      check: () => {
        // The user saves the file while the first attempt is being checked.
        if (++checks === 1) writeFileSync(file, '{\n  "agents": {"default": "main"},\n  "tools": {}\n}\n');
        return [];
      },
    });
    expect(await config.setToolEnabled("todo", true)).toEqual({ file, written: true, created: false });
    expect(checks).toBe(2);
    expect(readFileSync(file, "utf8")).toBe('{\n  "agents": {"default": "main"},\n  "tools": {"todo": {"enabled": true}}\n}\n');
  });

  it("a config file that is a symbolic link stays one: the file it points to is replaced", async () => {
    const dir = tempDir();
    const real = path.join(dir, "real.json");
    const link = path.join(dir, "picoclaw.config.json");
    writeFileSync(real, '{\n  "tools": {"todo": {"enabled": false}}\n}\n');
    symlinkSync(real, link);
    const config = new ConfigFile({ file: link, create: link, check: () => [] });
    expect(await config.setToolEnabled("todo", true)).toMatchObject({ file: real, written: true });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe('{\n  "tools": {"todo": {"enabled": true}}\n}\n');
  });

  it("a file that is gone since start-up is not made again (that would drop the rest of the config)", async () => {
    const dir = tempDir();
    const file = path.join(dir, "picoclaw.config.json");
    const config = new ConfigFile({ file, create: file, check: () => [] });
    await expect(config.setToolEnabled("todo", true)).rejects.toMatchObject({ code: "config_not_written", message: expect.stringContaining("is gone") });
    expect(readdirSync(dir)).toEqual([]);
  });
});
