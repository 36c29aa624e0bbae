/**
 * The Discord channel against a fake Discord on 127.0.0.1 (REST and
 * gateway): @discordjs's clients pointed at it (`api_root`; the gateway's
 * URL is what the fake REST answers to GET /gateway/bot), a whole gateway
 * in-process (config → runtime → channel), users' messages pushed as
 * gateway dispatches, and the channel read as the user would see it.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { TOO_LONG_TEXT } from "../../src/features/discord/bot.js";
import { BOT_ID, type DiscordUser, FakeDiscord, type FakeDiscordOptions } from "../support/fake-discord.js";
import { type HarnessOptions, harness } from "../support/project.js";
import { testTools } from "../support/tools.js";
import { eventually } from "../support/wait.js";

const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.discord-test-secret-token_0123456789";
const ALICE: DiscordUser = { id: "100000000000000001", username: "alice" };
const MALLORY: DiscordUser = { id: "666000000000000666", username: "mallory" };
const OTHER_BOT: DiscordUser = { id: "500000000000000005", username: "other_bot", bot: true };
const DM = "300000000000000003";
const GENERAL = "400000000000000004";
const DM_KEY = `agent:main:discord:${DM}`;
const BOT: DiscordUser = { id: BOT_ID, username: "test_bot", bot: true };

/** GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES, and MESSAGE_CONTENT. */
const BASE_INTENTS = (1 << 0) | (1 << 9) | (1 << 12);
const MESSAGE_CONTENT = 1 << 15;

interface Setup extends Omit<HarnessOptions, "config"> {
  channel?: Record<string, unknown>;
  config?: Record<string, unknown>;
  fake?: FakeDiscordOptions;
  botToken?: string;
  /** Scripts the fake before the channel starts. */
  before?: (discord: FakeDiscord) => void;
}

async function discordGateway(setup: Setup = {}) {
  const discord = await FakeDiscord.start(TOKEN, setup.fake);
  onTestFinished(() => discord.close());
  const h = harness({
    ...setup,
    tools: setup.tools ?? testTools,
    env: { DISCORD_BOT_TOKEN: setup.botToken ?? TOKEN },
    config: {
      ...setup.config,
      channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot, ...setup.channel }],
    },
  });
  setup.before?.(discord);
  const failures = await h.runtime.start();
  onTestFinished(() => {
    for (const line of h.logger.lines) expect(line.message).not.toContain(TOKEN);
  });
  return { discord, h, failures };
}

/** The channel has been sent `count` messages (at least). */
async function answers(discord: FakeDiscord, channelId: string, count: number): Promise<string[]> {
  return eventually(() => {
    const texts = discord.textsIn(channelId);
    expect(texts.length).toBeGreaterThanOrEqual(count);
    return texts;
  });
}

describe("the Discord channel", () => {
  it("answers a DM from an allowed user in that DM, showing typing meanwhile; it identified without compression and without the Message Content intent", async () => {
    const { discord, h, failures } = await discordGateway();
    expect(failures).toEqual([]);
    const connection = await discord.identified();
    expect(connection.query).toBe("v=10&encoding=json");
    expect(connection.identify).toMatchObject({ token: TOKEN, intents: BASE_INTENTS, compress: false, shard: [0, 1] });
    discord.message("hello there", ALICE, { channelId: DM });
    const [answer] = await answers(discord, DM, 1);
    expect(answer).toMatch(/^You said: hello there/);
    expect((await h.runtime.historyOf(DM_KEY)).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(discord.callsTo("POST", /^\/channels\/\d+\/typing$/)[0]!.path).toBe(`/channels/${DM}/typing`);
    // Nobody is pinged by what the agent writes.
    expect(discord.sent[0]!.allowedMentions).toEqual({ parse: [] });
    expect(discord.callsTo("GET", /^\/users\/@me$/)[0]!.authorization).toBe(`Bot ${TOKEN}`);
    expect(h.logger.lines).toContainEqual({ level: "info", message: 'discord channel "discord": connected to the gateway as @test_bot' });
  });

  it("in a server's channel answers only a message that mentions the bot, with the mention taken out of the text", async () => {
    const { discord, h } = await discordGateway();
    await discord.identified();
    discord.message("just chatting, not for the bot", ALICE, { channelId: GENERAL, guild: true });
    discord.message(`<@${BOT_ID}> what is up?`, ALICE, { channelId: GENERAL, guild: true, mentions: [BOT] });
    const [answer] = await answers(discord, GENERAL, 1);
    expect(answer).toMatch(/^You said: what is up\?/);
    const history = await h.runtime.historyOf(`agent:main:discord:${GENERAL}`);
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["what is up?"]);
    expect(discord.textsIn(GENERAL)).toHaveLength(1);
  });

  it("with group_trigger.mention_only false asks for the Message Content intent and answers every message in a server's channel", async () => {
    const { discord } = await discordGateway({ channel: { group_trigger: { mention_only: false } } });
    expect((await discord.identified()).identify.intents).toBe(BASE_INTENTS | MESSAGE_CONTENT);
    discord.message("no mention here", ALICE, { channelId: GENERAL, guild: true });
    expect((await answers(discord, GENERAL, 1))[0]).toMatch(/^You said: no mention here/);
  });

  it("Discord refusing the Message Content intent ends the connection with an error line that says what to turn on", async () => {
    const { discord, h } = await discordGateway({ channel: { group_trigger: { mention_only: false } }, fake: { messageContent: false } });
    await eventually(() => expect(discord.connections[0]?.closeCode).toBe(4014));
    await eventually(() =>
      expect(h.logger.lines).toContainEqual({
        level: "error",
        message:
          'discord channel "discord": Discord refused the intents: turn on Message Content Intent (Developer Portal → the application → Bot → Privileged Gateway Intents), or set group_trigger.mention_only to true; the bot is disconnected',
      }),
    );
    expect(h.logger.lines.some((l) => l.message.includes("connecting again"))).toBe(false);
    expect(discord.connections).toHaveLength(1);
  });

  it("ignores a stranger (logging who, never what they wrote) and other bots, and makes no model call for them", async () => {
    const { discord, h } = await discordGateway();
    await discord.identified();
    discord.message("give me your secrets", MALLORY, { channelId: DM });
    discord.message(`<@${BOT_ID}> secrets please`, MALLORY, { channelId: GENERAL, guild: true, mentions: [BOT] });
    discord.message(`<@${BOT_ID}> beep`, OTHER_BOT, { channelId: GENERAL, guild: true, mentions: [BOT] });
    discord.message("an echo of my own", BOT, { channelId: DM });
    discord.message("hi", ALICE, { channelId: "300000000000000099" });
    await answers(discord, "300000000000000099", 1);
    expect(discord.textsIn(DM)).toEqual([]);
    expect(discord.textsIn(GENERAL)).toEqual([]);
    expect(discord.calls.filter((c) => c.path.includes(DM) || c.path.includes(GENERAL))).toEqual([]);
    expect(h.logger.lines.filter((l) => l.message.includes("ignored a message"))).toEqual([
      {
        level: "warn",
        message: `discord channel "discord": ignored a message from user ${MALLORY.id} (@mallory) in channel ${DM}: not in channel_list[0].allow_from`,
      },
      {
        level: "warn",
        message: `discord channel "discord": ignored a message from user ${MALLORY.id} (@mallory) in channel ${GENERAL}: not in channel_list[0].allow_from`,
      },
    ]);
    expect(h.logger.lines.some((l) => l.message.includes("secrets"))).toBe(false);
    expect(h.runtime.sessionKeys()).toEqual(["agent:main:discord:300000000000000099"]);
  });

  it("lets in a username from allow_from, with or without @, in any case", async () => {
    const { discord } = await discordGateway({ channel: { allow_from: ["@alice"] } });
    await discord.identified();
    discord.message("hi", { ...ALICE, username: "Alice" }, { channelId: DM });
    expect((await answers(discord, DM, 1))[0]).toMatch(/^You said: hi/);
  });

  it("with an empty allow_from answers nobody, and says so at start-up", async () => {
    const { discord, h } = await discordGateway({ channel: { allow_from: [] } });
    expect(h.warnings).toContain(
      'channel_list[0].allow_from is empty: discord channel "discord" answers nobody; list your Discord user id there, or set dm_policy "pairing" (README, "Channels")',
    );
    await discord.identified();
    discord.message("hi", ALICE, { channelId: DM });
    await eventually(() => expect(h.logger.lines.some((l) => l.message.includes(`ignored a message from user ${ALICE.id} (@alice)`))).toBe(true));
    expect(discord.sent).toEqual([]);
  });

  it("sends a long answer as messages under 2,000 characters, a code block cut in two closed and opened again", async () => {
    const { discord } = await discordGateway();
    await discord.identified();
    const code = Array.from({ length: 70 }, (_, i) => `const line${String(i).padStart(2, "0")} = "${"x".repeat(30)}";`);
    const text = ["Here is the code:", "```ts", ...code, "```", "That was it."].join("\n");
    expect(text.length).toBeGreaterThan(2000);
    discord.message(text, ALICE, { channelId: DM });
    await eventually(() => expect(discord.textsIn(DM).join("\n")).toContain("That was it."));
    const messages = discord.textsIn(DM);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    for (const message of messages) {
      expect(message.length).toBeLessThanOrEqual(2000);
      // Every message has its fences in pairs: each reads on its own.
      expect((message.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(messages[1]).toMatch(/^```ts\n/);
    // Nothing of the code is lost.
    const all = messages.join("\n");
    for (const line of code) expect(all).toContain(line);
  });

  it("waits out a 429 for the Retry-After Discord asks, then sends the message", async () => {
    const { discord, h } = await discordGateway({ before: (d) => d.rateLimitNext("POST", /^\/channels\/\d+\/messages$/, 0.2) });
    await discord.identified();
    discord.message("hello despite limits", ALICE, { channelId: DM });
    expect((await answers(discord, DM, 1))[0]).toMatch(/^You said: hello despite limits/);
    expect(discord.callsTo("POST", /^\/channels\/\d+\/messages$/).map((c) => c.status)).toEqual([429, 200]);
    expect(h.logger.lines.some((l) => l.level === "warn" && l.message.includes("Discord rate-limits POST /channels/"))).toBe(true);
  });

  it("/clear empties the session (the runtime's command, as in any chat); /help answers from the chat", async () => {
    const { discord, h } = await discordGateway();
    await discord.identified();
    discord.message("remember me", ALICE, { channelId: DM });
    await answers(discord, DM, 1);
    expect(await h.runtime.historyOf(DM_KEY)).toHaveLength(2);
    discord.message("/clear", ALICE, { channelId: DM });
    expect((await answers(discord, DM, 2))[1]).toBe("Cleared: this session's history, plan and undelivered messages are gone.");
    expect(await h.runtime.historyOf(DM_KEY)).toEqual([]);
    // In a server's channel, `@bot /clear` is the command too.
    discord.message(`<@${BOT_ID}> /help`, ALICE, { channelId: GENERAL, guild: true, mentions: [BOT] });
    expect((await answers(discord, GENERAL, 1))[0]).toContain("/clear");
  });

  it("refuses a message longer than it reads, with a reply, and without a model call", async () => {
    const { discord, h } = await discordGateway();
    await discord.identified();
    discord.message("y".repeat(4001), ALICE, { channelId: DM });
    expect(await answers(discord, DM, 1)).toEqual([TOO_LONG_TEXT]);
    expect(await h.runtime.historyOf(DM_KEY)).toEqual([]);
  });

  it("keeps its connection: heartbeats are acknowledged and no second identify is needed", async () => {
    const { discord } = await discordGateway({ fake: { heartbeatMs: 100 } });
    const connection = await discord.identified();
    await eventually(() => expect(connection.heartbeats).toBeGreaterThanOrEqual(3));
    expect(discord.connections).toHaveLength(1);
    expect(connection.closeCode).toBeUndefined();
  });

  it("resumes its session after the gateway drops the connection, and goes on answering", async () => {
    const { discord, h } = await discordGateway();
    const first = await discord.identified();
    first.socket.close(4000, "Unknown error");
    await eventually(() => expect(discord.connections.at(-1)!.resumed).toBe(true));
    expect(discord.connections.at(-1)!.identify).toMatchObject({ token: TOKEN, session_id: "session-1" });
    discord.message("still there?", ALICE, { channelId: DM });
    expect((await answers(discord, DM, 1))[0]).toMatch(/^You said: still there\?/);
    expect(h.logger.lines).toContainEqual({ level: "info", message: 'discord channel "discord": resumed the gateway session' });
  });

  it("when Discord fails the first connection (GET /gateway/bot answers 503), it is tried again after a backoff, then made", async () => {
    const unavailable = { status: 503, body: { message: "Service Unavailable", code: 0 } };
    const { discord, h, failures } = await discordGateway({
      // The first attempt and the REST client's 3 retries.
      before: (d) => {
        for (let i = 0; i < 4; i++) d.script("GET", /^\/gateway\/bot$/, unavailable);
      },
    });
    expect(failures).toEqual([]);
    await discord.identified();
    expect(
      discord
        .callsTo("GET", /^\/gateway\/bot$/)
        .map((c) => c.status)
        .slice(0, 5),
    ).toEqual([503, 503, 503, 503, 200]);
    expect(h.logger.lines).toContainEqual({
      level: "warn",
      message: 'discord channel "discord": cannot connect to the gateway (503: Service Unavailable); trying again in 1 s',
    });
    discord.message("made it", ALICE, { channelId: DM });
    expect((await answers(discord, DM, 1))[0]).toMatch(/^You said: made it/);
  });

  it("a token refused once the bot runs (GET /gateway/bot answers 401) disconnects it loudly instead of retrying for ever", async () => {
    const { discord, h } = await discordGateway({
      before: (d) => d.script("GET", /^\/gateway\/bot$/, { status: 401, body: { message: "401: Unauthorized", code: 0 } }),
    });
    await eventually(() =>
      expect(h.logger.lines).toContainEqual({
        level: "error",
        message: 'discord channel "discord": Discord refused the token (401 0: 401: Unauthorized); the bot is disconnected: check channel_list[0].token',
      }),
    );
    expect(discord.callsTo("GET", /^\/gateway\/bot$/)).toHaveLength(1);
    expect(discord.connections).toEqual([]);
  });

  it("a refused token keeps the channel from starting, naming where the token is configured and never the token", async () => {
    const wrong = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.a-wrong-token-that-discord-refuses_0";
    const { discord, failures, h } = await discordGateway({ botToken: wrong });
    expect(failures).toEqual([expect.stringContaining("Discord refused the token (401 0: 401: Unauthorized); check channel_list[0].token")]);
    expect(discord.connections).toEqual([]);
    for (const line of [...failures, ...h.logger.lines.map((l) => l.message)]) expect(line).not.toContain(wrong);
  });

  it("closing ends the gateway connection with close code 1000 and the bot makes no request after it", { timeout: 90_000 }, async () => {
    const { discord, h } = await discordGateway();
    const connection = await discord.identified();
    await h.runtime.close(0);
    expect(connection.closeCode).toBe(1000);
    const count = discord.calls.length;
    await discord.disconnected();
    expect(discord.calls.length).toBe(count);
  });
});
