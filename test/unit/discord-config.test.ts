/**
 * A Discord `channel_list` entry: strict, every problem named by its JSON
 * path, the token a secret that no output shows, mention-only by default;
 * PicoClaw's entry read as ours, what we lack left out with a note. And
 * the two decisions before the relay: which gateway messages are read
 * (incoming.ts) and who is admitted (access.ts).
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli.js";
import { ConfigError } from "../../src/errors.js";
import { DiscordAccess } from "../../src/features/discord/access.js";
import { incomingOf } from "../../src/features/discord/incoming.js";
import { discordFromPicoclaw } from "../../src/features/discord/picoclaw.js";
import { loadConfig } from "../../src/house.js";
import { recordingLogger, writeProject } from "../support/project.js";

const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.discord-unit-secret-token_0123456789";
const entry = (extra: Record<string, unknown> = {}) => ({ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: ["100000000000000001"], ...extra });

function problemsOf(config: unknown, env: Record<string, string> = { DISCORD_BOT_TOKEN: TOKEN }): string[] {
  try {
    loadConfig({ env, cwd: writeProject({ config, agents: {} }) });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a ConfigError");
}

async function cli(argv: string[], config: unknown, env: Record<string, string> = { DISCORD_BOT_TOKEN: TOKEN }) {
  const out: string[] = [];
  const err: string[] = [];
  const logger = recordingLogger();
  const code = await runCli({ argv, env, cwd: writeProject({ config }), stdout: (t) => out.push(t), stderr: (t) => err.push(t), logger });
  return { code, stdout: out.join("\n"), stderr: err.join("\n"), logs: logger.lines.map((l) => l.message).join("\n") };
}

describe("a discord channel_list entry", () => {
  it("gets its defaults: answers mentions only in servers", () => {
    const loaded = loadConfig({ env: { DISCORD_BOT_TOKEN: TOKEN }, cwd: writeProject({ config: { channel_list: [entry()] }, agents: {} }) });
    expect(loaded.config.channel_list).toEqual([
      {
        type: "discord",
        token: TOKEN,
        allow_from: ["100000000000000001"],
        group_trigger: { mention_only: true },
        dm_policy: "allowlist",
        pairing_code_ttl_minutes: 60,
        pairing_max_pending: 3,
      },
    ]);
  });

  it("takes the pairing keys every channel has (dm_policy, pairing_code_ttl_minutes, pairing_max_pending), each problem named by its path", () => {
    const loaded = loadConfig({
      env: { DISCORD_BOT_TOKEN: TOKEN },
      cwd: writeProject({ config: { channel_list: [entry({ dm_policy: "pairing", pairing_code_ttl_minutes: 15, pairing_max_pending: 5 })] }, agents: {} }),
    });
    expect(loaded.config.channel_list[0]).toMatchObject({ dm_policy: "pairing", pairing_code_ttl_minutes: 15, pairing_max_pending: 5 });
    expect(problemsOf({ channel_list: [entry({ dm_policy: "open", pairing_code_ttl_minutes: 0, pairing_max_pending: 101 })] })).toEqual([
      'channel_list[0].dm_policy: expected one of "allowlist", "pairing"',
      "channel_list[0].pairing_code_ttl_minutes: must be >= 1",
      "channel_list[0].pairing_max_pending: must be <= 100",
    ]);
  });

  it("names the JSON path of every problem", () => {
    expect(
      problemsOf({
        channel_list: [
          entry({
            token: "Bot abc",
            allow_from: [100000000000000000, "Al ice"],
            group_trigger: { mention_only: "yes", prefixes: ["!"] },
            api_root: "ftp://x",
            gateway_url: "ws://x",
          }),
        ],
      }),
    ).toEqual([
      'channel_list[0].token: expected a bot token from the Discord Developer Portal (Bot → Reset Token: three parts joined by dots, without a "Bot " prefix)',
      "channel_list[0].allow_from[0]: expected a Discord user id as a string of digits (ids are too large for JSON numbers) or a username (lowercase letters, digits, _ and ., with or without @)",
      "channel_list[0].allow_from[1]: expected a Discord user id as a string of digits (ids are too large for JSON numbers) or a username (lowercase letters, digits, _ and ., with or without @)",
      "channel_list[0].group_trigger.mention_only: expected boolean, received string",
      'channel_list[0].group_trigger: unknown key "prefixes"',
      "channel_list[0].api_root: expected an http(s) URL without query, such as https://discord.com/api",
      'channel_list[0]: unknown key "gateway_url"',
    ]);
    expect(problemsOf({ channel_list: [{ type: "slack" }] })).toEqual(['channel_list[0].type: expected one of "telegram", "discord"']);
  });

  it("a Telegram and a Discord channel each get their type as their name", () => {
    const loaded = loadConfig({
      env: { DISCORD_BOT_TOKEN: TOKEN, TELEGRAM_BOT_TOKEN: "123456:TEST-secret_token-abcdefghij" },
      cwd: writeProject({ config: { channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [1] }, entry()] }, agents: {} }),
    });
    expect(loaded.config.channel_list.map((c) => c.type)).toEqual(["telegram", "discord"]);
  });

  it("config check masks the token and warns of an empty allow_from; no output or log carries the token", async () => {
    const { code, stdout, stderr, logs } = await cli(["config", "check"], { channel_list: [entry({ allow_from: [] })] });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).channel_list).toEqual([
      {
        type: "discord",
        token: "********",
        allow_from: [],
        group_trigger: { mention_only: true },
        dm_policy: "allowlist",
        pairing_code_ttl_minutes: 60,
        pairing_max_pending: 3,
      },
    ]);
    expect(stderr).toContain(
      'warning: channel_list[0].allow_from is empty: discord channel "discord" answers nobody; list your Discord user id there, or set dm_policy "pairing"',
    );
    for (const text of [stdout, stderr, logs]) expect(text).not.toContain(TOKEN);
  });

  it('gives no empty-allow_from warning with dm_policy "pairing": people are let in by pairing', async () => {
    const { code, stderr } = await cli(["config", "check"], { channel_list: [entry({ allow_from: [], dm_policy: "pairing" })] });
    expect(code).toBe(0);
    expect(stderr).not.toContain("allow_from is empty");
  });

  it("a token Discord would never accept is refused without being shown", async () => {
    const { code, stderr } = await cli(["config", "check"], { channel_list: [entry({ token: "secret-without-dots-123456789012345" })] });
    expect(code).toBe(2);
    expect(stderr).toContain("channel_list[0].token: expected a bot token from the Discord Developer Portal");
    expect(stderr).not.toContain("secret-without-dots");
  });
});

describe("PicoClaw's Discord entry", () => {
  it("reads token (in settings or beside type), allow_from, agent and group_trigger.mention_only; what we lack is noted and left out", () => {
    const notes: string[] = [];
    const ours = discordFromPicoclaw(
      "discord",
      {
        enabled: true,
        type: "discord",
        allow_from: ["42"],
        agent: "main",
        placeholder: { enabled: true, text: ["Thinking..."] },
        reasoning_channel_id: "",
        group_trigger: { mention_only: false, prefixes: ["!bot"] },
        settings: { token: "${DISCORD_TOKEN}", proxy: "http://proxy:8080" },
      },
      notes,
    );
    expect(ours).toEqual({
      name: "discord",
      type: "discord",
      token: "${DISCORD_TOKEN}",
      allow_from: ["42"],
      agent: "main",
      group_trigger: { mention_only: false },
    });
    expect(notes).toEqual(["channel_list.discord: placeholder, group_trigger.prefixes, settings.proxy are PicoClaw's and not read here; ignored"]);
    // An older file: the token beside type, settings.mention_only; a placeholder switched off is nothing to note.
    const older: string[] = [];
    expect(discordFromPicoclaw("dc", { type: "discord", token: "t", placeholder: { enabled: false }, settings: { mention_only: true } }, older)).toEqual({
      name: "dc",
      type: "discord",
      token: "t",
      group_trigger: { mention_only: true },
    });
    expect(older).toEqual([]);
  });

  it("a PicoClaw config's channel_list object takes its Discord bot, with the notes as start-up warnings", () => {
    const loaded = loadConfig({
      env: { DC: TOKEN },
      cwd: writeProject({
        config: {
          channel_list: { discord: { enabled: true, type: "discord", allow_from: ["42"], typing: { enabled: true }, settings: { token: "${DC}" } } },
        },
        agents: {},
      }),
    });
    expect(loaded.config.channel_list).toEqual([
      {
        name: "discord",
        type: "discord",
        token: TOKEN,
        allow_from: ["42"],
        group_trigger: { mention_only: true },
        dm_policy: "allowlist",
        pairing_code_ttl_minutes: 60,
        pairing_max_pending: 3,
      },
    ]);
    expect(loaded.warnings).toContain("channel_list.discord: typing is PicoClaw's and not read here; ignored");
  });
});

const BOT = "900000000000000001";
const alice = { id: "100000000000000001", username: "alice" };
const message = (extra: Record<string, unknown>) => ({
  id: "1",
  type: 0,
  channel_id: "300000000000000003",
  content: "hi",
  author: alice,
  mentions: [],
  ...extra,
});

describe("which gateway messages the channel reads", () => {
  it("a DM, as it is; a server message only when it mentions the bot, the mention taken out", () => {
    expect(incomingOf(message({}), BOT, true)).toEqual({ chatId: "300000000000000003", sender: alice, text: "hi", inGuild: false });
    expect(incomingOf(message({ guild_id: "7" }), BOT, true)).toBeNull();
    expect(incomingOf(message({ guild_id: "7", content: `<@${BOT}> /clear`, mentions: [{ id: BOT }] }), BOT, true)?.text).toBe("/clear");
    expect(incomingOf(message({ guild_id: "7", content: `hey <@!${BOT}> look`, mentions: [] }), BOT, true)?.text).toBe("hey look");
    // Someone else's mention is not ours.
    expect(incomingOf(message({ guild_id: "7", content: "<@123> hi", mentions: [{ id: "123" }] }), BOT, true)).toBeNull();
    expect(incomingOf(message({ guild_id: "7" }), BOT, false)?.text).toBe("hi");
  });

  it("never a bot's (its own included), a webhook's, Discord's own notices, an empty text, or a payload it cannot read", () => {
    expect(incomingOf(message({ author: { id: "5", username: "b", bot: true } }), BOT, true)).toBeNull();
    expect(incomingOf(message({ author: { id: BOT, username: "me" } }), BOT, true)).toBeNull();
    expect(incomingOf(message({ webhook_id: "9" }), BOT, true)).toBeNull();
    expect(incomingOf(message({ type: 7 }), BOT, true)).toBeNull();
    expect(incomingOf(message({ type: 19 }), BOT, true)?.text).toBe("hi");
    expect(incomingOf(message({ content: `<@${BOT}>` }), BOT, true)).toBeNull();
    expect(incomingOf(message({ channel_id: "../etc" }), BOT, true)).toBeNull();
    expect(incomingOf({ nonsense: true }, BOT, true)).toBeNull();
  });
});

describe("who the channel admits", () => {
  it("a listed id, or a listed username (with or without @, any case); nobody when the list is empty", () => {
    const access = new DiscordAccess(["100000000000000001", "@Bob"], "channel_list[0]");
    expect(access.admit({ id: "100000000000000001" })).toEqual({ admitted: true });
    expect(access.admit({ id: "2", username: "bob" })).toEqual({ admitted: true });
    expect(access.admit({ id: "3", username: "mallory" })).toEqual({ admitted: false, why: "not in channel_list[0].allow_from" });
    const nobody = new DiscordAccess([], "channel_list[1]");
    expect(nobody.empty).toBe(true);
    expect(nobody.admit({ id: "100000000000000001", username: "alice" }).admitted).toBe(false);
  });
});
