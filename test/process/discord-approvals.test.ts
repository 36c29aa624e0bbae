/**
 * Asking in a Discord channel, against the fake Discord: a tool call under
 * approval "ask" arrives as a message with buttons; a press by a user
 * admitted decides it (the interaction acknowledged) and the message is
 * edited to say so, without buttons; a press by anyone else is refused in
 * a reply only they see, and decides nothing; a decision made elsewhere
 * (the API) edits the message too. An ask_user question comes with its
 * options listed, and the user's next message answers it. Nothing waits
 * silently.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { type DiscordUser, FakeDiscord, type SentMessage } from "../support/fake-discord.js";
import { DEFAULT_TOOLS_OFF, harness, jsonOf } from "../support/project.js";
import { eventually } from "../support/wait.js";

const TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDE.discord-test-secret-token_0123456789";
const ALICE: DiscordUser = { id: "100000000000000001", username: "alice" };
const MALLORY: DiscordUser = { id: "666000000000000666", username: "mallory" };
const DM = "300000000000000003";
const KEY = `agent:main:discord:${DM}`;
const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;

async function discordGateway(runs: string[]) {
  const discord = await FakeDiscord.start(TOKEN);
  onTestFinished(() => discord.close());
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
  const h = harness({
    tools: [touch],
    env: { DISCORD_BOT_TOKEN: TOKEN },
    config: {
      tools: { ...DEFAULT_TOOLS_OFF, ask_user: { enabled: true }, touch: { approval: "ask" } },
      channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot }],
    },
  });
  expect(await h.runtime.start()).toEqual([]);
  await discord.identified();
  return { discord, h };
}

/** The message with buttons the bot sent to ask for approval. */
function asked(discord: FakeDiscord): Promise<SentMessage> {
  return eventually(() => {
    const found = discord.sent.find((m) => m.components && m.components.length > 0);
    expect(found).toBeDefined();
    return found!;
  });
}

const buttons = (message: SentMessage): { label: string; custom_id: string; style: number }[] => message.components!.flatMap((row) => row.components);

describe("approvals in a Discord channel", () => {
  it("shows the call with Allow, Deny and Allow for this session; Alice's press allows it and the message says so, without buttons", async () => {
    const runs: string[] = [];
    const { discord, h } = await discordGateway(runs);
    discord.message('CALL touch {"thing":"door"}', ALICE, { channelId: DM });
    const message = await asked(discord);
    expect(message.channelId).toBe(DM);
    expect(message.content).toMatch(/^\*\*touch\*\* wants to run:\n```json\n\{\n {2}"thing": "door"\n\}\n```\nAnswer by \d\d:\d\d UTC, or it is denied\.$/);
    expect(buttons(message).map((b) => b.label)).toEqual(["Allow", "Deny", "Allow for this session"]);
    expect(runs).toEqual([]);
    discord.press(buttons(message)[0]!.custom_id, ALICE, message);
    await eventually(() => expect(discord.textsIn(DM).some((t) => t.includes("touched door"))).toBe(true));
    expect(runs).toEqual(["door"]);
    await eventually(() => expect(message.edits).toBe(1));
    expect(message.content).toMatch(/\*\*Allowed\*\* \(discord:100000000000000001\)$/);
    expect(message.components).toEqual([]);
    // The press is acknowledged (DEFERRED_UPDATE_MESSAGE), without the bot's token.
    const [callback] = discord.callsTo("POST", CALLBACK);
    expect(callback!.body).toEqual({ type: 6 });
    expect(callback!.authorization).toBeUndefined();
    const records = (await h.runtime.historyOf(KEY)).filter((m) => m.role === "system" && m.record);
    expect(records.map((m) => (m as unknown as { record: { by: string } }).record.by)).toEqual(["discord:100000000000000001"]);
  });

  it("refuses a press by a user not in allow_from, in a reply only they see: nothing is decided, nothing runs; Deny by Alice then denies", async () => {
    const runs: string[] = [];
    const { discord, h } = await discordGateway(runs);
    discord.message('CALL touch {"thing":"safe"}', ALICE, { channelId: DM });
    const message = await asked(discord);
    discord.press(buttons(message)[0]!.custom_id, MALLORY, message, true);
    await eventually(() => expect(discord.callsTo("POST", CALLBACK)).toHaveLength(1));
    expect(discord.callsTo("POST", CALLBACK)[0]!.body).toEqual({ type: 4, data: { content: "You may not answer this.", flags: 64 } });
    expect(h.logger.lines.some((l) => l.level === "warn" && l.message.includes(`user ${MALLORY.id} (@mallory): not in channel_list[0].allow_from`))).toBe(true);
    expect(h.runtime.approvals.pending(KEY)).toHaveLength(1);
    expect(runs).toEqual([]);
    discord.press(buttons(message)[1]!.custom_id, ALICE, message);
    await eventually(() => expect(discord.textsIn(DM).some((t) => t.includes("The user declined to run touch"))).toBe(true));
    expect(runs).toEqual([]);
    await eventually(() => expect(message.content).toMatch(/\*\*Denied\*\* \(discord:100000000000000001\)$/));
  });

  it("a decision made elsewhere (the API) edits the message too; a late press is told it was decided", async () => {
    const runs: string[] = [];
    const { discord, h } = await discordGateway(runs);
    discord.message('CALL touch {"thing":"gate"}', ALICE, { channelId: DM });
    const message = await asked(discord);
    const [, deny] = buttons(message);
    const [waiting] = h.runtime.approvals.pending(KEY);
    const res = await h.request(`/v1/sessions/${KEY}/approvals/${waiting!.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "allow" }),
    });
    expect((await jsonOf(res)).decision).toBe("allow");
    await eventually(() => expect(message.content).toMatch(/\*\*Allowed\*\* \(api\)$/));
    discord.press(deny!.custom_id, ALICE, message);
    await eventually(() => expect(discord.callsTo("POST", CALLBACK)).toHaveLength(1));
    expect(discord.callsTo("POST", CALLBACK)[0]!.body.data.content).toMatch(/^Decided already: allowed \(api\)/);
    await eventually(() => expect(runs).toEqual(["gate"]));
  });
});

describe("exec from a Discord channel", () => {
  it("is refused without asking while tools.exec.allow_remote is false: nobody is shown buttons for a call that cannot run", async () => {
    const discord = await FakeDiscord.start(TOKEN);
    onTestFinished(() => discord.close());
    const h = harness({
      env: { DISCORD_BOT_TOKEN: TOKEN },
      config: { channel_list: [{ type: "discord", token: "${DISCORD_BOT_TOKEN}", allow_from: [ALICE.id], api_root: discord.apiRoot }] },
    });
    expect(await h.runtime.start()).toEqual([]);
    await discord.identified();
    discord.message(`CALL exec ${JSON.stringify({ action: "run", command: "echo hi" })}`, ALICE, { channelId: DM });
    await eventually(() => expect(discord.textsIn(DM).some((t) => t.includes("exec is restricted to internal channels"))).toBe(true));
    expect(discord.sent.filter((m) => m.components && m.components.length > 0)).toEqual([]);
  });
});

describe("ask_user in a Discord channel", () => {
  it("sends the question with its options listed; the next message answers it", async () => {
    const { discord } = await discordGateway([]);
    discord.message(`CALL ask_user ${JSON.stringify({ question: "Which day?", options: ["Monday", "Friday"] })}`, ALICE, { channelId: DM });
    await eventually(() => expect(discord.textsIn(DM)).toContain("Which day?\n1. Monday\n2. Friday\n(Answer with your next message.)"));
    discord.message("Friday", ALICE, { channelId: DM });
    await eventually(() => expect(discord.textsIn(DM).some((t) => t.includes("The user answered: Friday"))).toBe(true));
  });
});
