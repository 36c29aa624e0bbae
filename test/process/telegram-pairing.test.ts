/**
 * Pairing on the Telegram channel, against a fake Bot API and a fake model
 * that counts its requests, a whole gateway in-process: an unknown user in
 * a private chat gets their id and a pairing code and nothing else (no
 * model call); writing again gives the same code and no second reply; in a
 * group nobody unknown is answered; once the owner approves the code the
 * user is told they are in and answered like an allow_from user.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { APPROVED_TEXT } from "../../src/channels/pairing.js";
import { FakeBotApi } from "../support/fake-telegram.js";
import { fakeModelServers, textCompletion } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness, openaiConfig } from "../support/project.js";
import { eventually } from "../support/wait.js";

const TOKEN = "123456:PAIRING-secret_token-abcdefghij";
const ALICE = { id: 1001, username: "alice" };
const BOB = { id: 2002, username: "bob" };
const CODES = ["KEYB2345", "CARL6789", "DAVE2345", "EVEE6789"];
const modelServer = fakeModelServers();

async function pairingGateway(channel: Record<string, unknown> = {}) {
  const model = await modelServer(() => textCompletion("the model's answer"));
  const api = await FakeBotApi.start(TOKEN);
  onTestFinished(() => api.close());
  const codes = [...CODES];
  const h = harness({
    pairingCodes: () => codes.shift()!,
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
    config: {
      ...openaiConfig(model.url),
      tools: DEFAULT_TOOLS_OFF,
      channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url, dm_policy: "pairing", ...channel }],
    },
  });
  await h.runtime.start();
  onTestFinished(() => {
    for (const line of h.logger.lines) expect(line.message).not.toContain(TOKEN);
  });
  return { api, h, model };
}

describe("the Telegram channel with dm_policy pairing", () => {
  it("gives an unknown user their id and a pairing code and nothing else: no model call, no session", async () => {
    const { api, h, model } = await pairingGateway();
    api.message("hello, can you run **rm -rf /** for me", BOB);
    const [reply] = await eventually(() => {
      const texts = api.textsIn(BOB.id);
      expect(texts).toHaveLength(1);
      return texts;
    });
    expect(reply).toContain("Your Telegram user id: 2002");
    expect(reply).toContain("Pairing code: KEYB2345");
    expect(reply).toContain("picoclaw pairing approve KEYB2345");
    expect(model.requests).toHaveLength(0);
    expect((await h.runtime.sessions(100)).map((s) => s.key)).not.toContain("agent:main:telegram:2002");
    // The log names the user and the code, never what they wrote.
    const logged = h.logger.lines.map((l) => l.message).join("\n");
    expect(logged).toContain("user 2002 (@bob) asked to be let in: pairing code KEYB2345");
    expect(logged).not.toContain("rm -rf");
    expect(await h.runtime.pairings.pending()).toEqual([expect.objectContaining({ code: "KEYB2345", channel: "telegram", userId: "2002", userName: "@bob" })]);
  });

  it("a repeat message of the pending user gets no second reply and no new code", async () => {
    const { api, h, model } = await pairingGateway();
    api.message("hi", BOB);
    await eventually(() => expect(api.textsIn(BOB.id)).toHaveLength(1));
    api.message("hello?", BOB);
    api.message("anyone?", BOB);
    // Alice's answer comes after Bob's messages were handled (updates are let in in order).
    api.message("hi from alice", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id)).toEqual(["the model's answer"]));
    expect(api.textsIn(BOB.id)).toHaveLength(1);
    expect((await h.runtime.pairings.pending()).map((p) => p.code)).toEqual(["KEYB2345"]);
    expect(model.requests).toHaveLength(1);
  });

  it("does not give codes in a group: unknown senders there are ignored", async () => {
    const { api, h } = await pairingGateway();
    api.message("hi all", BOB, { id: -100500 });
    api.message("hi from alice", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id)).toEqual(["the model's answer"]));
    expect(api.textsIn(-100500)).toEqual([]);
    expect(await h.runtime.pairings.pending()).toEqual([]);
  });

  it("past pairing_max_pending codes waiting, a new unknown user gets no reply", async () => {
    const { api, h } = await pairingGateway({ pairing_max_pending: 1 });
    api.message("hi", BOB);
    await eventually(() => expect(api.textsIn(BOB.id)).toHaveLength(1));
    api.message("hi", { id: 3003, username: "carl" });
    api.message("hi from alice", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id)).toHaveLength(1));
    expect(api.textsIn(3003)).toEqual([]);
    expect(h.logger.lines.map((l) => l.message)).toContainEqual(expect.stringContaining("user 3003 (@carl) got no pairing code: 1 codes wait already"));
  });

  it("once the owner approves the code, the user is told they are in and is answered, also in groups", async () => {
    const { api, h, model } = await pairingGateway();
    api.message("hi", BOB);
    await eventually(() => expect(api.textsIn(BOB.id)).toHaveLength(1));
    expect(await h.runtime.pairings.approve("KEYB2345")).toMatchObject({ channel: "telegram", userId: "2002" });
    await eventually(() => expect(api.textsIn(BOB.id).at(-1)).toBe(APPROVED_TEXT));
    api.message("now?", BOB);
    await eventually(() => expect(api.textsIn(BOB.id).at(-1)).toBe("the model's answer"));
    api.message("@test_bot and here?", BOB, { id: -100500 });
    await eventually(() => expect(api.textsIn(-100500)).toEqual(["the model's answer"]));
    expect(model.requests).toHaveLength(2);
  });

  it('with dm_policy "allowlist" (the default) an unknown user gets no reply and no code', async () => {
    const { api, h } = await pairingGateway({ dm_policy: "allowlist" });
    api.message("hi", BOB);
    api.message("hi from alice", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id)).toHaveLength(1));
    expect(api.textsIn(BOB.id)).toEqual([]);
    expect(await h.runtime.pairings.pending()).toEqual([]);
  });
});
