import path from "node:path";
import { describe, expect, it } from "vitest";
import { usableModelEntry } from "../../src/config/load.js";
import { loadConfig } from "../../src/house.js";
import { problemsOf, sectionAt, tempDir, writeProject } from "../support/project.js";

const load = (config: unknown, env: Record<string, string> = {}) => loadConfig({ env, cwd: writeProject({ config, agents: {} }) });

describe("config file lookup", () => {
  it("uses defaults when there is no config file", () => {
    const cwd = tempDir();
    const loaded = loadConfig({ env: {}, cwd });
    expect(loaded.file).toBeNull();
    expect(loaded.config.gateway).toEqual({
      host: "127.0.0.1",
      port: 18790,
      token: "",
      allowed_origins: [],
      allowed_hosts: [],
      limits: {
        headers_timeout_ms: 10_000,
        request_timeout_ms: 30_000,
        keep_alive_timeout_ms: 5_000,
        send_timeout_ms: 30_000,
        max_connections: 1_000,
        max_queued_turns: 32,
        max_queued_bytes: 4_194_304,
        young_generation_mib: 8,
        heap_growing_percent: 50,
        idle_collect_ms: 10_000,
        young_release_ms: 250,
        drop_start_code: true,
        jit_busy_turns: 10,
        jit_busy_ms: 10_000,
        jit_interrupt_budget: 512,
        stream_queue_bytes: 8_388_608,
        max_streams: 500,
        idempotency_keys: 1_000,
        idempotency_bytes: 16_777_216,
        responses_kept: 1_000,
        responses_bytes: 33_554_432,
      },
    });
    expect(loaded.config.agents.default).toBe("main");
    expect(loaded.config.agents.defaults).toEqual({
      model_name: "local",
      max_tool_iterations: 20,
      max_turn_output_bytes: 4 * 1024 * 1024,
      max_history_messages: 500,
      max_history_bytes: 4 * 1024 * 1024,
      summarize: false,
      turn_timeout_ms: 900_000,
      workspace: "workspace",
      restrict_to_workspace: true,
      allow_read_outside_workspace: false,
      prompt_files: { enabled: true, max_bytes: 16384 },
      subturn: { max_depth: 3, max_concurrent: 5, max_running: 20, timeout_ms: 300000, concurrency_timeout_ms: 30000 },
    });
    expect(loaded.config.session).toEqual({
      store: "jsonl",
      dir: "sessions",
      max_disk_reads: 4,
      max_stored: 100_000,
      max_stored_bytes: 2 * 1024 * 1024 * 1024,
      max_sessions: 1_000,
      max_bytes: 128 * 1024 * 1024,
      request_memo_bytes: 8 * 1024 * 1024,
      state_max_keys: 10_000,
      state_max_bytes: 4 * 1024 * 1024,
    });
    expect(loaded.config.model_list).toEqual([{ model_name: "local", provider: "builtin", model: "scripted" }]);
    expect(sectionAt(loaded.config, "tools.todo").enabled).toBe(false);
    expect(sectionAt(loaded.config, "tools.subagent").enabled).toBe(true);
    expect(loaded.agentsDir).toBe(path.join(cwd, "agents"));
  });

  it("finds --config first, then $PICOCLAW_CONFIG, then ./picoclaw.config.json", () => {
    const cwd = writeProject({ config: { gateway: { port: 1 } }, agents: {} });
    const other = writeProject({ config: { gateway: { port: 2 } }, agents: {} });
    const third = writeProject({ config: { gateway: { port: 3 } }, agents: {} });
    const viaEnv = path.join(other, "picoclaw.config.json");
    const viaArg = path.join(third, "picoclaw.config.json");
    expect(loadConfig({ env: {}, cwd }).config.gateway.port).toBe(1);
    expect(loadConfig({ env: { PICOCLAW_CONFIG: viaEnv }, cwd }).config.gateway.port).toBe(2);
    expect(loadConfig({ env: { PICOCLAW_CONFIG: viaEnv }, cwd, argv: ["gateway", "--config", viaArg] }).config.gateway.port).toBe(3);
    expect(loadConfig({ env: {}, cwd, argv: [`--config=${viaArg}`] }).config.gateway.port).toBe(3);
  });

  it("resolves relative paths against the config file's folder", () => {
    const dir = writeProject({ config: { agents: { dir: "my-agents" } }, agents: {} });
    const loaded = loadConfig({ env: {}, cwd: tempDir(), argv: ["--config", path.join(dir, "picoclaw.config.json")] });
    expect(loaded.baseDir).toBe(dir);
    expect(loaded.agentsDir).toBe(path.join(dir, "my-agents"));
  });

  it("stops with the path when --config names a missing file", () => {
    expect(problemsOf(() => loadConfig({ env: {}, cwd: tempDir(), argv: ["--config", "nope.json"] }))[0]).toMatch(
      /^--config: config file not found: .*nope\.json$/,
    );
    expect(problemsOf(() => loadConfig({ env: { PICOCLAW_CONFIG: "/no/such.json" }, cwd: tempDir() }))[0]).toMatch(/^PICOCLAW_CONFIG: config file not found/);
  });

  it("reports invalid JSON with its line and column", () => {
    const dir = writeProject({ config: '{\n  "gateway": {\n    "port": 1,\n  }\n}', agents: {} });
    const [problem] = problemsOf(() => loadConfig({ env: {}, cwd: dir }));
    expect(problem).toMatch(/picoclaw\.config\.json: invalid JSON at line 4, column 3/);
  });

  it("refuses a config that is not an object", () => {
    expect(problemsOf(() => load("[1,2]"))[0]).toMatch(/the config must be a JSON object/);
  });
});

describe("config validation", () => {
  it("names the JSON path of a wrong type", () => {
    expect(problemsOf(() => load({ tools: { todo: { enabled: "yes" } } }))).toEqual(["tools.todo.enabled: expected boolean, received string"]);
  });

  it("rejects unknown keys at every level, naming them", () => {
    const problems = problemsOf(() => load({ gateway: { colour: "red" }, tools: { todo: { enabld: true } }, extra: 1 }));
    expect(problems).toEqual(expect.arrayContaining(['gateway: unknown key "colour"', 'tools.todo: unknown key "enabld"', 'unknown key "extra"']));
    expect(problems).toHaveLength(3);
  });

  it("lists one message per problem", () => {
    const problems = problemsOf(() =>
      load({
        gateway: { port: 70000, host: "" },
        agents: { defaults: { max_tool_iterations: 0 } },
        model_list: [{ model_name: "x", provider: "acme", model: "m" }],
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        "gateway.port: must be <= 65535",
        "gateway.host: must not be shorter than 1 characters",
        "agents.defaults.max_tool_iterations: must be >= 1",
        'model_list[0].provider: expected one of "builtin", "openai", "anthropic"',
      ]),
    );
  });

  it("rejects unknown fallbacks and an unknown default model; a second entry of one model_name is PicoClaw's load balancing: a warning, the first is used", () => {
    const problems = problemsOf(() =>
      load({
        agents: { defaults: { model_name: "gpt" } },
        model_list: [{ model_name: "a", provider: "builtin", model: "scripted", fallbacks: ["zzz"] }],
      }),
    );
    expect(problems).toEqual([
      'model_list[0].fallbacks[0]: unknown model_name "zzz"',
      'agents.defaults.model_name: unknown model_name "gpt"; model_list has: a',
    ]);
    const twice = load({
      agents: { defaults: { model_name: "a" } },
      model_list: [
        { model_name: "a", provider: "builtin", model: "first" },
        { model_name: "a", provider: "builtin", model: "second" },
      ],
    });
    expect(twice.config.model_list.map((m) => m.model)).toEqual(["first"]);
    expect(twice.warnings).toContain("model_list[1] (a): a second entry of one model_name (PicoClaw's load balancing) is not supported; the first is used");
  });

  it("cross-field problems are reported alongside the others", () => {
    const problems = problemsOf(() =>
      load({
        gateway: { port: "x" },
        model_list: [
          { model_name: "a", provider: "builtin", model: "s", fallbacks: ["b"] },
          { model_name: "c", provider: "builtin", model: "s" },
        ],
      }),
    );
    expect(problems).toEqual([
      "gateway.port: expected number, received string",
      'model_list[0].fallbacks[0]: unknown model_name "b"',
      'agents.defaults.model_name: unknown model_name "local"; model_list has: a, c',
    ]);
    expect(problemsOf(() => load({ gateway: { port: "x" } }, { PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME: "gtp" }))).toEqual([
      "gateway.port: expected number, received string",
      'PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME (agents.defaults.model_name): unknown model_name "gtp"; model_list has: local',
    ]);
  });

  it("a bad MCP server name says what a name may hold", () => {
    expect(problemsOf(() => load({ tools: { mcp: { servers: { "my.srv": { command: "x" } } } } }))).toEqual([
      'tools.mcp.servers["my.srv"]: invalid name: expected a server name: letters, digits, _ and -, at most 32',
    ]);
  });

  it("accepts a $schema key for editors", () => {
    expect(load({ $schema: "./config/picoclaw.schema.json" }).config.$schema).toBe("./config/picoclaw.schema.json");
  });
});

describe("${VAR} substitution", () => {
  it("replaces variables in strings, and $${VAR} stays literal", () => {
    const loaded = load({ gateway: { token: "${TOKEN}-x", host: "$${HOST}" } }, { TOKEN: "abc" });
    expect(loaded.config.gateway.token).toBe("abc-x");
    expect(loaded.config.gateway.host).toBe("${HOST}");
  });

  it("an unset variable outside model_list stops start-up naming path and variable", () => {
    expect(problemsOf(() => load({ gateway: { token: "${NOPE}" } }))).toEqual(["gateway.token: environment variable NOPE is not set"]);
  });

  it("an unset variable in a model entry only matters when that entry is used", () => {
    const loaded = load({
      model_list: [
        { model_name: "local", provider: "builtin", model: "scripted" },
        { model_name: "gpt", provider: "openai", model: "gpt-4o-mini", api_key: "${OPENAI_API_KEY}" },
      ],
    });
    expect(usableModelEntry(loaded, "local").model_name).toBe("local");
    expect(problemsOf(() => usableModelEntry(loaded, "gpt"))).toEqual([
      'model_list[1].api_key: environment variable OPENAI_API_KEY is not set (model "gpt" needs it)',
    ]);
    const set = load(
      { model_list: [{ model_name: "gpt", provider: "openai", model: "m", api_key: "${OPENAI_API_KEY}" }], agents: { defaults: { model_name: "gpt" } } },
      { OPENAI_API_KEY: "sk-1" },
    );
    expect(usableModelEntry(set, "gpt").api_key).toBe("sk-1");
  });
});

describe(".env files", () => {
  it("loads .env beside the config and in the working directory, never overriding set variables", () => {
    const project = writeProject({
      config: { gateway: { token: "${A}" }, model_list: [{ model_name: "local", provider: "builtin", model: "${B}" }] },
      agents: {},
      files: { ".env": "A=from-config-dir\nB=from-config-dir\n" },
    });
    const cwd = writeProject({ agents: {}, files: { ".env": "B=from-cwd\n" } });
    const loaded = loadConfig({ env: {}, cwd, argv: ["--config", path.join(project, "picoclaw.config.json")] });
    expect(loaded.config.gateway.token).toBe("from-config-dir");
    expect(loaded.config.model_list[0]!.model).toBe("from-cwd");
    const env = { A: "from-env" };
    const again = loadConfig({ env, cwd, argv: ["--config", path.join(project, "picoclaw.config.json")] });
    expect(again.config.gateway.token).toBe("from-env");
    expect(env).toEqual({ A: "from-env" });
  });

  it("a .env can name the config file", () => {
    const project = writeProject({ config: { gateway: { port: 4242 } }, agents: {} });
    const cwd = writeProject({ agents: {}, files: { ".env": `PICOCLAW_CONFIG=${path.join(project, "picoclaw.config.json")}\n` } });
    expect(loadConfig({ env: {}, cwd }).config.gateway.port).toBe(4242);
  });
});

describe("environment overrides", () => {
  it("apply after the file", () => {
    const loaded = load(
      {
        gateway: { host: "127.0.0.1", port: 1 },
        model_list: [
          { model_name: "local", provider: "builtin", model: "scripted" },
          { model_name: "b", provider: "builtin", model: "scripted" },
        ],
      },
      {
        PICOCLAW_GATEWAY_HOST: "0.0.0.0",
        PICOCLAW_GATEWAY_PORT: "0",
        PICOCLAW_GATEWAY_TOKEN: "t0k",
        PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME: "b",
        PICOCLAW_AGENTS_DEFAULTS_MAX_TOOL_ITERATIONS: "7",
        PICOCLAW_TOOLS_TODO_ENABLED: "TRUE",
        PICOCLAW_TOOLS_SUBAGENT_ENABLED: "0",
        PICOCLAW_TOOLS_SPAWN_ENABLED: "False",
      },
    );
    expect(loaded.config.gateway).toMatchObject({ host: "0.0.0.0", port: 0, token: "t0k" });
    expect(loaded.config.agents.defaults.model_name).toBe("b");
    expect(loaded.config.agents.defaults.max_tool_iterations).toBe(7);
    expect(sectionAt(loaded.config, "tools.todo").enabled).toBe(true);
    expect(sectionAt(loaded.config, "tools.subagent").enabled).toBe(false);
    expect(sectionAt(loaded.config, "tools.spawn").enabled).toBe(false);
  });

  it.each([
    ["PICOCLAW_TOOLS_TODO_ENABLED", "yes", 'PICOCLAW_TOOLS_TODO_ENABLED: expected true, false, 1 or 0, got "yes"'],
    ["PICOCLAW_GATEWAY_PORT", "80a", 'PICOCLAW_GATEWAY_PORT: expected an integer from 0 to 65535, got "80a"'],
    ["PICOCLAW_GATEWAY_PORT", "65536", "PICOCLAW_GATEWAY_PORT: expected an integer from 0 to 65535, got 65536"],
    ["PICOCLAW_AGENTS_DEFAULTS_MAX_TOOL_ITERATIONS", "0", "PICOCLAW_AGENTS_DEFAULTS_MAX_TOOL_ITERATIONS: expected an integer from 1 to 1000, got 0"],
    ["PICOCLAW_GATEWAY_HOST", " ", "PICOCLAW_GATEWAY_HOST: must not be empty"],
  ])("%s=%j stops start-up naming the variable", (variable, value, message) => {
    expect(problemsOf(() => load({}, { [variable]: value }))).toEqual([message]);
  });

  it("a bad PICOCLAW_LOG_LEVEL stops start-up naming the variable", () => {
    expect(problemsOf(() => load({}, { PICOCLAW_LOG_LEVEL: "verbose" }))).toEqual([
      'PICOCLAW_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"',
    ]);
    expect(load({}, { PICOCLAW_LOG_LEVEL: "DEBUG" }).config.gateway.port).toBe(18790);
  });

  it("an unknown model name from the environment names the variable", () => {
    expect(problemsOf(() => load({}, { PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME: "nope" }))).toEqual([
      'PICOCLAW_AGENTS_DEFAULTS_MODEL_NAME (agents.defaults.model_name): unknown model_name "nope"; model_list has: local',
    ]);
  });

  it("keeps switches of tools that are not built in for when tools are known", () => {
    const loaded = load({}, { PICOCLAW_TOOLS_NOPE_ENABLED: "true", PICOCLAW_TOOLS_MCP_FS_READ_ENABLED: "0" });
    expect(loaded.toolSwitches).toEqual([
      { variable: "PICOCLAW_TOOLS_MCP_FS_READ_ENABLED", tool: "mcp_fs_read", enabled: false },
      { variable: "PICOCLAW_TOOLS_NOPE_ENABLED", tool: "nope", enabled: true },
    ]);
    expect(problemsOf(() => load({}, { PICOCLAW_TOOLS_NOPE_ENABLED: "maybe" }))).toEqual([
      'PICOCLAW_TOOLS_NOPE_ENABLED: expected true, false, 1 or 0, got "maybe"',
    ]);
    expect(problemsOf(() => load({}, { PICOCLAW_TOOLS_MCP_ENABLED: "true" }))).toEqual(["PICOCLAW_TOOLS_MCP_ENABLED: tools.mcp is not a tool"]);
  });

  it("every key holding a value or a list has PicoClaw's PICOCLAW_<PATH> variable, checked like the file's value", () => {
    const loaded = load(
      {},
      {
        PICOCLAW_AGENTS_DEFAULTS_RESTRICT_TO_WORKSPACE: "false",
        PICOCLAW_AGENTS_DEFAULTS_WORKSPACE: "/srv/ws",
        PICOCLAW_TOOLS_EXEC_ENABLED: "true",
        PICOCLAW_TOOLS_EXEC_TIMEOUT_SECONDS: "30",
        PICOCLAW_TOOLS_EXEC_CUSTOM_DENY_PATTERNS: "\\bterraform\\b, \\bhelm\\b",
        PICOCLAW_TOOLS_ALLOW_READ_PATHS: "^/data",
        PICOCLAW_AGENTS_DEFAULTS_SUBTURN_MAX_DEPTH: "2",
        PICOCLAW_TOOLS_READ_FILE_MODE: "lines",
      },
    );
    expect(loaded.config.agents.defaults).toMatchObject({ restrict_to_workspace: false, workspace: "/srv/ws" });
    expect(sectionAt(loaded.config, "tools.exec")).toMatchObject({
      enabled: true,
      timeout_seconds: 30,
      custom_deny_patterns: ["\\bterraform\\b", "\\bhelm\\b"],
    });
    expect(loaded.config.tools.allow_read_paths).toEqual(["^/data"]);
    expect(sectionAt(loaded.config, "agents.defaults.subturn").max_depth).toBe(2);
    expect(sectionAt(loaded.config, "tools.read_file").mode).toBe("lines");
  });

  it("a bad value in a key's variable stops start-up naming the variable and the key", () => {
    expect(problemsOf(() => load({}, { PICOCLAW_TOOLS_EXEC_TIMEOUT_SECONDS: "soon" }))).toEqual([
      `PICOCLAW_TOOLS_EXEC_TIMEOUT_SECONDS: expected an integer from 0 to 86400, got "soon"`,
    ]);
    expect(problemsOf(() => load({}, { PICOCLAW_TOOLS_EXEC_SANDBOX: "docker" }))).toEqual([
      'PICOCLAW_TOOLS_EXEC_SANDBOX (tools.exec.sandbox): expected one of "none", "bwrap"',
    ]);
  });

  it("does not touch the caller's env object", () => {
    const env = { PICOCLAW_GATEWAY_PORT: "5" };
    const dir = writeProject({ config: {}, agents: {}, files: { ".env": "X=1\n" } });
    loadConfig({ env, cwd: dir });
    expect(env).toEqual({ PICOCLAW_GATEWAY_PORT: "5" });
  });
});

describe("config/picoclaw.config.json shipped", () => {
  it("the shipped config and examples are valid", () => {
    const root = path.resolve(import.meta.dirname, "..", "..");
    expect(loadConfig({ env: {}, cwd: root }).file).toBe(path.join(root, "picoclaw.config.json"));
    for (const example of ["openai", "ollama", "anthropic"]) {
      const file = path.join(root, "config", `${example}.example.json`);
      const loaded = loadConfig({ env: {}, cwd: root, argv: ["--config", file] });
      expect(loaded.config.model_list.length).toBeGreaterThan(0);
    }
  });
});
