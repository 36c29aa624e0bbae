/**
 * The house, as an embedder uses it: a feature brings its own config
 * section, and a provider, a session store and a channel type register
 * with their schemas; each one is read, validated, switched by the
 * environment, masked and made as the built-in ones are.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bootstrap, prepare } from "../../src/bootstrap.js";
import { channelEntry } from "../../src/config/channel-schema.js";
import { configJsonSchema } from "../../src/config/json-schema.js";
import { maskSecrets, MASK } from "../../src/config/mask.js";
import { loadConfig } from "../../src/house.js";
import type { ProviderAdapter } from "../../src/models/adapter.js";
import type { ChannelType } from "../../src/port/channel-type.js";
import { type Feature, defineFeature } from "../../src/port/feature.js";
import { MemoryHistoryStore } from "../../src/session/memory-history.js";
import type { SessionStoreAdapter } from "../../src/session/store.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { problemsOf, recordingLogger, sectionAt, writeProject } from "../support/project.js";

/** A feature with a tool section of its own (`tools.greet`) and a section at the top (`greeting`). */
const greeter = defineFeature({
  name: "greeter",
  needs: [],
  config: {
    tools: { greet: z.strictObject({ enabled: z.boolean().default(false), word: z.string().default("hello") }).prefault({}) },
    sections: { greeting: z.strictObject({ signature: z.string().default("") }).prefault({}) },
    secrets: (own) => (own.sections.greeting.signature ? [own.sections.greeting.signature] : []),
  },
  setup: (_host, config) => ({
    tools: [
      defineTool({
        name: "greet",
        description: "Greets.",
        parameters: z.object({ who: z.string() }),
        execute: ({ who }) => toolResult.text(`${config.tools.greet.word}, ${who}`),
      }),
    ],
  }),
});

const project = (config: unknown) => writeProject({ config });

describe("a feature brings its own config", () => {
  it("its sections are in the schema with their defaults, its tool switched by PICOCLAW_TOOLS_<KEY>_ENABLED, its secrets masked", () => {
    const dir = project({ greeting: { signature: "sig-secret-value" } });
    const loaded = loadConfig({ env: { PICOCLAW_TOOLS_GREET_ENABLED: "true" }, cwd: dir, extensions: { features: [greeter] } });
    expect(sectionAt(loaded.config, "tools.greet")).toEqual({ enabled: true, word: "hello" });
    expect(sectionAt(loaded.config, "greeting")).toEqual({ signature: "sig-secret-value" });
    expect(loaded.secrets.has("sig-secret-value")).toBe(true);
    expect(sectionAt(maskSecrets(loaded.config, loaded), "greeting").signature).toBe(MASK);
    const schema = configJsonSchema(loaded.layout) as { properties: Record<string, { properties: Record<string, unknown> }> };
    expect(schema.properties.tools!.properties.greet).toMatchObject({ properties: { word: { default: "hello" } } });
    expect(Object.keys(schema.properties)).toContain("greeting");
  });

  it("a bad value in its section stops start-up naming the JSON path; without it the section is unknown", () => {
    const dir = project({ tools: { greet: { word: 5 } } });
    expect(problemsOf(() => loadConfig({ env: {}, cwd: dir, extensions: { features: [greeter] } }))).toEqual([
      "tools.greet.word: expected string, received integer",
    ]);
    expect(problemsOf(() => loadConfig({ env: {}, cwd: project({ greeting: {} }) }))).toEqual(['unknown key "greeting"']);
  });

  it("made into a runtime, its tool reads its section; a section two features claim, or one in the core's place, is refused", async () => {
    const dir = project({ tools: { greet: { enabled: true, word: "ahoy" } } });
    const loaded = loadConfig({ env: {}, cwd: dir, extensions: { features: [greeter] } });
    const { runtime } = bootstrap(loaded, { logger: recordingLogger(), history: "memory" });
    const outcome = await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: 'CALL greet {"who":"you"}' });
    expect(outcome.reply).toContain("ahoy, you");
    await runtime.close();

    const core: Feature = { name: "core-taker", config: { sections: { "agents.defaults.model_name": z.string() } }, setup: () => ({}) };
    const nowhere: Feature = { name: "nowhere", config: { sections: { "gateway.extra": z.string() } }, setup: () => ({}) };
    expect(problemsOf(() => loadConfig({ env: {}, cwd: dir, extensions: { features: [greeter, greeter] } }))).toEqual(['two features are named "greeter"']);
    const other: Feature = { name: "other", config: greeter.config!, setup: () => ({}) };
    expect(problemsOf(() => loadConfig({ env: {}, cwd: dir, extensions: { features: [greeter, other, core, nowhere] } }))).toEqual([
      'feature "other": its config section "tools.greet" is taken by feature "greeter"',
      'feature "other": its config section "greeting" is taken by feature "greeter"',
      'feature "core-taker": its config section "agents.defaults.model_name" is taken by the core',
      'feature "nowhere": its config section "gateway.extra" is in no place sections go (the top level, tools.<key>, agents.defaults.<key>, session.<key>)',
    ]);
  });

  it("an embedder's feature given to prepare is preloaded like the built-in ones, seeing the tool names taken before it", async () => {
    const seen: string[] = [];
    const late: Feature = {
      name: "late",
      preload: async (ctx) => {
        seen.push(...[...ctx.taken.keys()].filter((name) => name === "todo" || name === "subagent"));
        const tool = defineTool({ name: "late_tool", description: "Arrived late.", parameters: z.object({}), enabledByDefault: true, execute: () => "late" });
        return { feature: { name: "late", setup: () => ({ tools: [tool] }) }, tools: [tool] };
      },
      setup: () => ({}),
    };
    const loaded = loadConfig({ env: {}, cwd: project({}) });
    const { runtime } = await prepare(loaded, { logger: recordingLogger(), history: "memory", features: [late] });
    expect(seen.sort()).toEqual(["subagent", "todo"]);
    expect(runtime.toolOverview().map((t) => t.name)).toContain("late_tool");
    await runtime.close();
  });

  it("a preloaded feature's sections stay the layout's: tools.plugins and tools.mcp are never taken for a missing tool's", async () => {
    const clock = path.resolve(import.meta.dirname, "..", "..", "examples", "tools", "clock.js");
    const loaded = loadConfig({ env: {}, cwd: project({ tools: { plugins: [clock], mcp: { servers: {} } } }) });
    const { runtime, warnings } = await prepare(loaded, { logger: recordingLogger(), history: "memory" });
    expect(runtime.toolOverview().map((t) => t.name)).toContain("clock");
    expect(warnings.filter((w) => w.includes("this section does nothing"))).toEqual([]);
    await runtime.close();
  });

  it("given to bootstrap instead of loadConfig, a feature with sections is refused, saying where it goes", () => {
    const loaded = loadConfig({ env: {}, cwd: project({}) });
    expect(problemsOf(() => bootstrap(loaded, { logger: recordingLogger(), history: "memory", features: [greeter] }))).toEqual([
      `feature "greeter" declares config sections: pass it to loadConfig's extensions (so they are read and validated), not to bootstrap`,
    ]);
  });
});

describe("adapters register as {type, schema, create}", () => {
  it("a provider: its name in model_list[].provider, its options checked, its create used for the entry", async () => {
    const shouting: ProviderAdapter = {
      type: "shouting",
      options: { volume: { schema: z.int().min(1).max(11), otherwise: "only shouting models have a volume" } },
      check: (entry) => ((entry as { volume?: number }).volume === 11 ? ["volume: 11 is too loud"] : []),
      create: (entry) => ({
        name: entry.model_name,
        chat: async (request) => ({
          text: `${"!".repeat((entry as { volume?: number }).volume ?? 1)} ${request.messages.length}`,
          toolCalls: [],
          modelName: entry.model_name,
        }),
      }),
    };
    const config = (volume: number) => ({
      agents: { defaults: { model_name: "loud" } },
      model_list: [
        { model_name: "loud", provider: "shouting", model: "x", volume },
        { model_name: "gpt", provider: "openai", model: "m", volume: 3 },
      ],
    });
    const loaded = loadConfig({ env: {}, cwd: project(config(3)), extensions: { providers: [shouting] } });
    const { runtime } = bootstrap(loaded, { logger: recordingLogger(), history: "memory" });
    expect((await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "hi" })).reply).toBe("!!! 2");
    await runtime.close();
    const loud = loadConfig({ env: {}, cwd: project(config(11)), extensions: { providers: [shouting] } });
    expect(problemsOf(() => bootstrap(loud, { logger: recordingLogger(), history: "memory" }))).toEqual(["model_list[0].volume: 11 is too loud"]);
    const usedGpt = loadConfig({ env: {}, cwd: project({ ...config(3), agents: { defaults: { model_name: "gpt" } } }), extensions: { providers: [shouting] } });
    expect(problemsOf(() => bootstrap(usedGpt, { logger: recordingLogger(), history: "memory" }))).toEqual([
      'model_list[1].volume: only for provider "shouting" (this entry is "openai"; only shouting models have a volume)',
    ]);
    expect(problemsOf(() => loadConfig({ env: {}, cwd: project(config(3)) }))[0]).toMatch(
      /^model_list\[0\]\.provider: expected one of "builtin", "openai", "anthropic"$/,
    );
  });

  it("a session store: its name in session.store, its options at session.<type> (their secrets known), the history it opens kept by the runtime", async () => {
    const opened: unknown[] = [];
    const history = new MemoryHistoryStore();
    const tape: SessionStoreAdapter = {
      type: "tape",
      description: "histories on tape",
      options: z.strictObject({ reel: z.string(), vault: z.string().optional() }),
      secrets: (options) => [(options as { vault?: string }).vault ?? ""].filter((s) => s !== ""),
      open: ({ options }) => {
        opened.push(options);
        return { history };
      },
    };
    const loaded = loadConfig({
      env: {},
      cwd: project({ session: { store: "tape", tape: { reel: "r1", vault: "vault-secret-42" } } }),
      extensions: { stores: [tape] },
    });
    expect(loaded.secrets.has("vault-secret-42")).toBe(true);
    const { runtime } = bootstrap(loaded, { logger: recordingLogger() });
    await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "keep me" });
    expect(opened).toEqual([{ reel: "r1", vault: "vault-secret-42" }]);
    expect((await history.get("agent:main:http:s")).map((m) => m.content)[0]).toBe("keep me");
    await runtime.close();
    expect(problemsOf(() => loadConfig({ env: {}, cwd: project({ session: { store: "tape", tape: { reel: 1 } } }), extensions: { stores: [tape] } }))).toEqual([
      "session.tape.reel: expected string, received integer",
    ]);
  });

  it("a channel type: its entries in channel_list (name and agent checked as every channel's), one feature made per entry", async () => {
    const made: string[] = [];
    const pager: ChannelType = {
      type: "pager",
      schema: channelEntry("pager", { number: z.string().regex(/^\d+$/, "expected digits") }),
      secrets: (entry) => [(entry as unknown as { number: string }).number],
      create: (entry, path) => {
        made.push(`${path}: ${entry.name ?? entry.type}`);
        return { name: `pager ${entry.name ?? entry.type}`, setup: () => ({ warnings: [`${path} pages`] }) };
      },
    };
    const config = {
      channel_list: [
        { type: "pager", number: "5551234" },
        { type: "pager", name: "night", number: "5559876", agent: "main" },
      ],
    };
    const loaded = loadConfig({ env: {}, cwd: project(config), extensions: { channels: [pager] } });
    expect(loaded.secrets.has("5551234")).toBe(true);
    const { runtime, warnings } = bootstrap(loaded, { logger: recordingLogger(), history: "memory" });
    expect(made).toEqual(["channel_list[0]: pager", "channel_list[1]: night"]);
    expect(warnings).toEqual(expect.arrayContaining(["channel_list[0] pages", "channel_list[1] pages"]));
    await runtime.close();
    expect(
      problemsOf(() =>
        loadConfig({ env: {}, cwd: project({ channel_list: [{ type: "pager", number: "x", agent: "Bad!" }] }), extensions: { channels: [pager] } }),
      ),
    ).toEqual(["channel_list[0].number: expected digits", "channel_list[0].agent: expected an agent id"]);
    expect(problemsOf(() => loadConfig({ env: {}, cwd: project(config) }))).toEqual([
      'channel_list[0].type: expected one of "telegram", "discord"',
      'channel_list[1].type: expected one of "telegram", "discord"',
    ]);
  });
});
