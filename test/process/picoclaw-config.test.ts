/**
 * A PicoClaw user's config works here. The fixture is PicoClaw's own
 * documented example (config/config.example.json of github.com/sipeed/picoclaw,
 * MIT), unchanged.
 */
import { copyFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import { loadConfig } from "../../src/house.js";
import { fakeServer } from "../support/models.js";
import { harness, recordingLogger, sectionAt, writeProject } from "../support/project.js";

const EXAMPLE = path.resolve(import.meta.dirname, "..", "fixtures", "picoclaw", "config.example.json");

function load(config: unknown, env: Record<string, string> = {}) {
  return loadConfig({ env, cwd: writeProject({ config }) });
}

describe("PicoClaw's documented example config", () => {
  it("loads unchanged: its models, defaults and tools read as ours, and what it has that we do not is a warning", () => {
    const dir = writeProject({});
    copyFileSync(EXAMPLE, path.join(dir, "picoclaw.config.json"));
    const loaded = loadConfig({ env: {}, cwd: dir });
    const byName = new Map(loaded.config.model_list.map((m) => [m.model_name, m]));
    expect(byName.get("gpt-5.4")).toMatchObject({ provider: "openai", model: "gpt-5.4", api_key: "sk-your-openai-key", api_base: "https://api.openai.com/v1" });
    expect(byName.get("claude-opus-4-6")).toMatchObject({ provider: "anthropic", model: "claude-opus-4-6", api_base: "https://api.anthropic.com/v1" });
    expect(byName.get("deepseek")).toMatchObject({ provider: "openai", model: "deepseek-chat", api_base: "https://api.deepseek.com/v1" });
    expect(byName.get("lmstudio-local")).toMatchObject({ provider: "openai", model: "openai/gpt-oss-20b", api_base: "http://localhost:1234/v1" });
    expect(byName.has("gemini")).toBe(false);
    expect(loaded.config.agents.defaults).toMatchObject({ model_name: "gpt-5.4", max_tokens: 8192, temperature: 0.7, max_tool_iterations: 20 });
    // PicoClaw's one context window for every model is each entry's here.
    expect(loaded.config.model_list.map((m) => m.context_window)).toEqual(loaded.config.model_list.map(() => 131072));
    expect(sectionAt(loaded.config, "tools.spawn").enabled).toBe(true);
    expect(sectionAt(loaded.config, "tools.mcp").servers).toEqual({});
    expect(loaded.warnings.join("\n")).toContain(
      'model_list[3] (gemini): vendor "antigravity" needs a login or a protocol PicoClaw-TS does not speak; entry ignored',
    );
    // Its heartbeat is ours too: read as it is written (interval, in minutes).
    expect(sectionAt(loaded.config, "heartbeat")).toMatchObject({ enabled: true, interval_minutes: 30 });
    expect(loaded.warnings.join("\n")).not.toMatch(/heartbeat/);
  });

  it("picoclaw config check passes with it (exit 0), printing the warnings", async () => {
    const dir = writeProject({});
    copyFileSync(EXAMPLE, path.join(dir, "picoclaw.config.json"));
    const err: string[] = [];
    const code = await runCli({ argv: ["config", "check"], env: {}, cwd: dir, stdout: () => {}, stderr: (t) => err.push(t), logger: recordingLogger() });
    expect(code).toBe(0);
    expect(err.join("\n")).toMatch(/^warning: version, evolution, devices/m);
  });
});

describe("PicoClaw's names", () => {
  it("a vendor/model model string picks the wire format and the vendor's base URL; provider, when given, wins and keeps the model whole", () => {
    const { config } = load({
      model_list: [
        { model_name: "a", model: "groq/llama-3.3-70b" },
        { model_name: "b", model: "anthropic/claude-sonnet-4-5", api_key: "k" },
        { model_name: "c", model: "ollama/llama3.1", api_base: "http://10.0.0.2:11434/v1" },
        { model_name: "d", provider: "openai", model: "openai/gpt-4o", api_base: "https://openrouter.ai/api/v1" },
        { model_name: "e", provider: "deepseek", model: "deepseek-chat" },
        { model_name: "f", model: "gpt-4o-mini" },
        { model_name: "local", provider: "builtin", model: "scripted" },
      ],
    });
    expect(config.model_list.map((m) => [m.model_name, m.provider, m.model, m.api_base])).toEqual([
      ["a", "openai", "llama-3.3-70b", "https://api.groq.com/openai/v1"],
      ["b", "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com/v1"],
      ["c", "openai", "llama3.1", "http://10.0.0.2:11434/v1"],
      ["d", "openai", "openai/gpt-4o", "https://openrouter.ai/api/v1"],
      ["e", "openai", "deepseek-chat", "https://api.deepseek.com/v1"],
      ["f", "openai", "gpt-4o-mini", undefined],
      ["local", "builtin", "scripted", undefined],
    ]);
  });

  it("api_keys lists give their first key (and say the others are unused); agents.defaults.model names the default model", () => {
    const loaded = load(
      {
        agents: { defaults: { model: "gpt" } },
        model_list: [{ model_name: "gpt", model: "openai/gpt-4o-mini", api_keys: ["${KEY_A}", "sk-b"] }],
      },
      { KEY_A: "sk-a" },
    );
    expect(loaded.config.agents.defaults.model_name).toBe("gpt");
    expect(loaded.config.model_list[0]!.api_key).toBe("sk-a");
    expect(loaded.warnings).toContain("model_list[0] (gpt): api_keys holds 2 keys; only the first is used (no key rotation here)");
  });

  it("an unknown provider is still an error naming the path and ours", () => {
    expect(() => load({ model_list: [{ model_name: "x", provider: "acme", model: "m" }] })).toThrow(
      /model_list\[0\]\.provider: expected one of "builtin", "openai", "anthropic"/,
    );
  });

  it("agents.defaults.max_tokens and temperature reach the request of a model entry that sets none of its own", async () => {
    const server = await fakeServer();
    const h = harness({
      config: {
        agents: { defaults: { model_name: "fake", max_tokens: 321, temperature: 0.3 } },
        model_list: [
          { model_name: "fake", model: "openai/fake-model", api_base: server.url },
          { model_name: "own", model: "openai/fake-model", api_base: server.url, max_tokens: 5 },
        ],
      },
      agents: { main: "---\nname: Main\n---\nHi.", other: "---\nmodel: own\n---\nHi." },
    });
    await h.chat({ message: "hi" });
    expect(server.requests.at(-1)!.body).toMatchObject({ max_tokens: 321, temperature: 0.3 });
    await h.chat({ message: "hi", agent: "other" });
    expect(server.requests.at(-1)!.body).toMatchObject({ max_tokens: 5, temperature: 0.3 });
  });

  it("PicoClaw's channel_list object reads as our list: an enabled Telegram bot with its settings; disabled ones and other apps are left out", () => {
    const loaded = load(
      {
        channel_list: {
          telegram: { enabled: true, type: "telegram", allow_from: ["42"], settings: { token: "${TG}", base_url: "", streaming: { enabled: false } } },
          discord: { enabled: false, type: "discord", allow_from: [], settings: { token: "x" } },
          slack: { enabled: true, type: "slack", settings: {} },
        },
      },
      { TG: "123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345678" },
    );
    expect(loaded.config.channel_list).toEqual([
      expect.objectContaining({
        name: "telegram",
        type: "telegram",
        token: "123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345678",
        allow_from: ["42"],
        streaming: false,
      }),
    ]);
    expect(loaded.warnings).toContain('channel_list.slack: channel type "slack" is not supported by PicoClaw-TS (it has: telegram, discord); ignored');
  });

  it("PicoClaw's MCP servers with enabled and type read as ours; disabled ones and a disabled MCP section start nothing", () => {
    const { config } = load({
      tools: {
        mcp: {
          enabled: true,
          servers: { on: { enabled: true, type: "stdio", command: "node", args: ["s.js"] }, off: { enabled: false, command: "x" } },
        },
      },
    });
    expect(sectionAt(config, "tools.mcp").servers).toEqual({ on: { command: "node", args: ["s.js"] } });
    expect(sectionAt(load({ tools: { mcp: { enabled: false, servers: { on: { command: "node" } } } } }).config, "tools.mcp").servers).toEqual({});
  });

  it("a _comment key anywhere is a comment", () => {
    expect(load({ _comment: "top", gateway: { _comment: "here too", port: 0 } }).config.gateway.port).toBe(0);
  });
});
