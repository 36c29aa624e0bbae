/**
 * Discord pairing end to end: the real gateway process (`node dist/main.js
 * gateway`) with a Discord channel under dm_policy "pairing" (the fake
 * Discord) and a fake model that counts its requests. An unknown user's DM
 * gets a pairing code and no model call; the real CLI (`picoclaw pairing
 * approve <code>`, a process of its own) approves it through the running
 * gateway; the user is told they are in (in the DM the bot opens to them),
 * is answered, and is still let in after a restart on the same session
 * folder.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { APPROVED_TEXT } from "../../src/channels/pairing.js";
import { type DiscordUser, FakeDiscord } from "../support/fake-discord.js";
import { FakeModelServer, textCompletion } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, openaiConfig, writeProject } from "../support/project.js";
import { picoclawProcess } from "../support/cli.js";
import { freePort } from "../support/listen.js";
import { eventually, within } from "../support/wait.js";

const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.process-discord-pairing-token_4242";
const GATEWAY_TOKEN = "gateway-token-discord-pairing-process";
const ALICE: DiscordUser = { id: "100000000000000001", username: "alice" };
const BOB: DiscordUser = { id: "200000000000000002", username: "bob" };
/** The real picoclaw command (the bot token comes from the project's .env only). */
const run = (args: string[], cwd: string) => picoclawProcess(args, cwd, ["DISCORD_BOT_TOKEN"]);

describe("Discord pairing in the real gateway process", () => {
  it("an unknown user's DM gets a code and no model call; picoclaw pairing approve lets them in, they are told so, and stay in across a restart", {
    timeout: 90_000,
  }, async () => {
    const discord = await FakeDiscord.start(TOKEN);
    onTestFinished(() => discord.close());
    const model = await FakeModelServer.start(() => textCompletion("the model's answer"));
    onTestFinished(() => model.close());
    const port = await freePort();
    const project = writeProject({
      config: {
        ...openaiConfig(model.url),
        tools: DEFAULT_TOOLS_OFF,
        gateway: { port, token: "${PICOCLAW_TEST_GATEWAY_TOKEN}" },
        channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot, dm_policy: "pairing" }],
      },
      files: { ".env": `PICOCLAW_TEST_GATEWAY_TOKEN=${GATEWAY_TOKEN}\nDISCORD_BOT_TOKEN=${TOKEN}\n` },
    });
    const connected = 'discord channel \\"discord\\": connected to the gateway as @test_bot';
    const gateway = run(["gateway"], project);
    await discord.identified();
    await eventually(() => expect(gateway.output()).toContain(connected));

    const bobDm = discord.dmChannelOf(BOB.id);
    discord.message("let me in", BOB, { channelId: bobDm });
    const reply = await eventually(() => {
      const texts = discord.textsIn(bobDm);
      expect(texts).toHaveLength(1);
      return texts[0]!;
    });
    const code = /Pairing code: `([A-Z2-9]{8})`/.exec(reply)![1]!;
    expect(reply).toContain(`Your Discord user id: \`${BOB.id}\``);
    expect(reply).toContain(`picoclaw pairing approve ${code}`);
    expect(model.requests).toHaveLength(0);

    const approve = run(["pairing", "approve", code], project);
    const approved = await within(`picoclaw pairing approve ${code} to exit`, approve.exited, { instead: approve.output });
    expect(approved, approve.output()).toBe(0);
    expect(approve.output()).toContain(`Approved: user ${BOB.id} (@bob) of channel discord is let in.`);
    // The running gateway opened Bob's DM and told him.
    await eventually(() => expect(discord.textsIn(bobDm).at(-1)).toBe(APPROVED_TEXT));
    expect(discord.callsTo("POST", /^\/users\/@me\/channels$/).map((c) => c.body)).toEqual([{ recipient_id: BOB.id }]);
    discord.message("hello now", BOB, { channelId: bobDm });
    await eventually(() => expect(discord.textsIn(bobDm).at(-1)).toBe("the model's answer"));
    expect(model.requests).toHaveLength(1);

    gateway.child.kill("SIGTERM");
    expect(await within("the gateway to exit", gateway.exited, { instead: gateway.output })).toBe(0);
    expect(gateway.output()).not.toContain(TOKEN);
    expect(gateway.output()).not.toContain(GATEWAY_TOKEN);
    expect(gateway.output()).not.toContain("let me in");

    // Paired users are kept in the session folder: after a restart Bob is still let in.
    const again = run(["gateway"], project);
    await discord.identified(2);
    await eventually(() => expect(again.output()).toContain(connected));
    discord.message("still me", BOB, { channelId: bobDm });
    await eventually(() => expect(discord.textsIn(bobDm)).toHaveLength(4));
    expect(discord.textsIn(bobDm).at(-1)).toBe("the model's answer");
    expect(model.requests).toHaveLength(2);
    again.child.kill("SIGTERM");
    expect(await within("the gateway to exit", again.exited, { instead: again.output })).toBe(0);
    expect(again.output()).not.toContain(TOKEN);
  });
});
