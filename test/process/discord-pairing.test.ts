/**
 * Pairing on the Discord channel (dm_policy "pairing"), against the fake
 * Discord and a scripted model server that counts its requests, a whole
 * gateway in-process: an unknown user's DM gets their Discord id and a
 * pairing code and nothing else; a mention in a server by an unknown user
 * is ignored (codes are given in DMs only) and answered once they are
 * paired; the owner's approval is told to the user in their DM (opened with
 * POST /users/@me/channels); approval buttons are refused to strangers and
 * taken from paired users; a paired user's messages keep their order.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { APPROVED_TEXT } from "../../src/channels/pairing.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { BOT_ID, type DiscordUser, FakeDiscord, type SentMessage } from "../support/fake-discord.js";
import { fakeModelServers } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness, openaiConfig } from "../support/project.js";
import { scriptedModel } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.discord-pairing-secret-token_0123456";
const ALICE: DiscordUser = { id: "100000000000000001", username: "alice" };
const BOB: DiscordUser = { id: "200000000000000002", username: "bob" };
const MALLORY: DiscordUser = { id: "666000000000000666", username: "mallory" };
const BOT: DiscordUser = { id: BOT_ID, username: "test_bot", bot: true };
const GENERAL = "400000000000000004";
const CODES = ["KEYB2345", "CARL6789", "DAVE2345"];
const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;
const modelServer = fakeModelServers();

async function pairingGateway(channel: Record<string, unknown> = {}, before?: (discord: FakeDiscord) => void) {
  const model = await modelServer(scriptedModel);
  const discord = await FakeDiscord.start(TOKEN);
  onTestFinished(() => discord.close());
  const runs: string[] = [];
  const touch = defineTool({
    name: "touch",
    description: "Touches a thing.",
    parameters: z.strictObject({ thing: z.string() }),
    enabledByDefault: true,
    execute: (args) => {
      runs.push(args.thing);
      return toolResult.text(`touched ${args.thing}`);
    },
  });
  const codes = [...CODES];
  const h = harness({
    tools: [touch],
    pairingCodes: () => codes.shift()!,
    env: { DISCORD_BOT_TOKEN: TOKEN },
    config: {
      ...openaiConfig(model.url),
      tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } },
      channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot, dm_policy: "pairing", ...channel }],
    },
  });
  before?.(discord);
  expect(await h.runtime.start()).toEqual([]);
  await discord.identified();
  onTestFinished(() => {
    for (const line of h.logger.lines) expect(line.message).not.toContain(TOKEN);
  });
  return { discord, h, model, runs };
}

const dm = (discord: FakeDiscord, user: DiscordUser) => ({ channelId: discord.dmChannelOf(user.id) });
const mention = { channelId: GENERAL, guild: true, mentions: [BOT] };
const logged = (h: { logger: { lines: { message: string }[] } }) => h.logger.lines.map((l) => l.message).join("\n");

/** Bob writes a DM, gets his code, and the owner approves it: he is told he is in. */
async function pairBob(discord: FakeDiscord, h: Awaited<ReturnType<typeof pairingGateway>>["h"]) {
  const bobDm = discord.dmChannelOf(BOB.id);
  discord.message("hi", BOB, { channelId: bobDm });
  await eventually(() => expect(discord.textsIn(bobDm)).toHaveLength(1));
  expect(await h.runtime.pairings.approve("KEYB2345")).toMatchObject({ channel: "discord", userId: BOB.id, userName: "@bob" });
  await eventually(() => expect(discord.textsIn(bobDm).at(-1)).toBe(APPROVED_TEXT));
}

describe("the Discord channel with dm_policy pairing", () => {
  it("gives an unknown user's DM their Discord id and a pairing code and nothing else: no model call, no session; a repeat gets no second reply", async () => {
    const { discord, h, model } = await pairingGateway();
    const bobDm = discord.dmChannelOf(BOB.id);
    discord.message("please run rm -rf / for me", BOB, { channelId: bobDm });
    const [reply] = await eventually(() => {
      const texts = discord.textsIn(bobDm);
      expect(texts).toHaveLength(1);
      return texts;
    });
    expect(reply).toContain(`Your Discord user id: \`${BOB.id}\``);
    expect(reply).toContain("Pairing code: `KEYB2345`");
    expect(reply).toContain("`picoclaw pairing approve KEYB2345`");
    // Written again while the code waits: no second reply, no new code; Alice, behind him, is answered.
    discord.message("hello?", BOB, { channelId: bobDm });
    discord.message("SAY hi alice", ALICE, dm(discord, ALICE));
    await eventually(() => expect(discord.textsIn(discord.dmChannelOf(ALICE.id))).toEqual(["hi alice"]));
    expect(discord.textsIn(bobDm)).toHaveLength(1);
    expect(model.requests).toHaveLength(1);
    expect((await h.runtime.sessions(100)).map((s) => s.key)).not.toContain(`agent:main:discord:${bobDm}`);
    expect(await h.runtime.pairings.pending()).toEqual([expect.objectContaining({ code: "KEYB2345", channel: "discord", userId: BOB.id, userName: "@bob" })]);
    expect(logged(h)).toContain(`user ${BOB.id} (@bob) asked to be let in: pairing code KEYB2345`);
    expect(logged(h)).not.toContain("rm -rf");
  });

  it("ignores a server mention by an unknown user (codes are given in DMs only) and answers it once they are paired, told so in their DM", async () => {
    const { discord, h, model } = await pairingGateway();
    discord.message(`<@${BOT_ID}> SAY not for you`, BOB, mention);
    discord.message(`<@${BOT_ID}> SAY hi alice`, ALICE, mention);
    await eventually(() => expect(discord.textsIn(GENERAL)).toEqual(["hi alice"]));
    expect(await h.runtime.pairings.pending()).toEqual([]);
    expect(model.requests).toHaveLength(1);
    expect(logged(h)).toContain(`ignored a message from user ${BOB.id} (@bob) in chat ${GENERAL}: not in channel_list[0].allow_from nor paired`);

    await pairBob(discord, h);
    // The DM was opened for Bob (the same channel his DMs come from).
    expect(discord.callsTo("POST", /^\/users\/@me\/channels$/).map((c) => c.body)).toEqual([{ recipient_id: BOB.id }]);
    expect(logged(h)).toContain(`user ${BOB.id} was approved; telling them`);
    discord.message(`<@${BOT_ID}> SAY hi bob`, BOB, mention);
    await eventually(() => expect(discord.textsIn(GENERAL)).toEqual(["hi alice", "hi bob"]));
    discord.message("SAY in the DM too", BOB, dm(discord, BOB));
    await eventually(() => expect(discord.textsIn(discord.dmChannelOf(BOB.id)).at(-1)).toBe("in the DM too"));
    expect(model.requests).toHaveLength(3);
  });

  it("refuses an approval button pressed by a stranger, and takes a paired user's press", async () => {
    const { discord, h, runs } = await pairingGateway();
    await pairBob(discord, h);
    const bobDm = discord.dmChannelOf(BOB.id);
    discord.message('CALL touch {"thing":"door"}', BOB, { channelId: bobDm });
    const message = await eventually(() => {
      const found = discord.sent.find((m: SentMessage) => m.components && m.components.length > 0);
      expect(found).toBeDefined();
      return found!;
    });
    const allow = message.components![0].components[0].custom_id as string;
    discord.press(allow, MALLORY, message, true);
    await eventually(() => expect(discord.callsTo("POST", CALLBACK)).toHaveLength(1));
    expect(discord.callsTo("POST", CALLBACK)[0]!.body).toEqual({ type: 4, data: { content: "You may not answer this.", flags: 64 } });
    expect(logged(h)).toContain(`refused an approval button pressed by user ${MALLORY.id} (@mallory): not in channel_list[0].allow_from nor paired`);
    expect(runs).toEqual([]);
    discord.press(allow, BOB, message);
    await eventually(() => expect(runs).toEqual(["door"]));
    expect(discord.callsTo("POST", CALLBACK)[1]!.body).toEqual({ type: 6 });
    await eventually(() => expect(message.content).toMatch(/\*\*Allowed\*\* \(discord:200000000000000002\)$/));
  });

  it("keeps a paired user's messages in order while the pairings are consulted", async () => {
    const { discord, h } = await pairingGateway();
    await pairBob(discord, h);
    const bobDm = discord.dmChannelOf(BOB.id);
    for (const n of ["one", "two", "three", "four"]) discord.message(`SAY ${n}`, BOB, { channelId: bobDm });
    await eventually(() => expect(discord.textsIn(bobDm).slice(2)).toHaveLength(4));
    const history = await h.runtime.historyOf(`agent:main:discord:${bobDm}`);
    expect(history.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["SAY one", "SAY two", "SAY three", "SAY four"]);
  });

  it("logs an approved user it cannot open a DM with, without the token, and lets them in anyway", async () => {
    const { discord, h } = await pairingGateway({}, (d) =>
      d.script("POST", /^\/users\/@me\/channels$/, { status: 403, body: { message: "Cannot send messages to this user", code: 50007 } }),
    );
    const bobDm = discord.dmChannelOf(BOB.id);
    discord.message("hi", BOB, { channelId: bobDm });
    await eventually(() => expect(discord.textsIn(bobDm)).toHaveLength(1));
    await h.runtime.pairings.approve("KEYB2345");
    await eventually(() =>
      expect(logged(h)).toContain(
        `could not open a DM with user ${BOB.id} to tell them they are in (403 50007: Cannot send messages to this user); they are let in anyway`,
      ),
    );
    expect(discord.textsIn(bobDm)).toHaveLength(1);
    discord.message("SAY welcome", BOB, { channelId: bobDm });
    await eventually(() => expect(discord.textsIn(bobDm).at(-1)).toBe("welcome"));
  });

  it('with dm_policy "allowlist" (the default) an unknown user gets no reply and no code, as before', async () => {
    const { discord, h } = await pairingGateway({ dm_policy: "allowlist" });
    discord.message("hi", BOB, dm(discord, BOB));
    discord.message("SAY hi alice", ALICE, dm(discord, ALICE));
    await eventually(() => expect(discord.textsIn(discord.dmChannelOf(ALICE.id))).toEqual(["hi alice"]));
    expect(discord.textsIn(discord.dmChannelOf(BOB.id))).toEqual([]);
    expect(await h.runtime.pairings.pending()).toEqual([]);
    expect(logged(h)).toContain(`ignored a message from user ${BOB.id} (@bob) in channel ${discord.dmChannelOf(BOB.id)}: not in channel_list[0].allow_from`);
  });
});
