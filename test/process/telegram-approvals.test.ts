/**
 * Asking in a Telegram chat, against the fake Bot API: a tool call under
 * approval "ask" arrives as a message with inline buttons; a press by a
 * user in allow_from decides it and the message is edited to say so; a
 * press by anyone else is refused and decides nothing; a decision made
 * elsewhere (the API) edits the message too. An ask_user question comes
 * with its options as a reply keyboard, and the user's next message
 * answers it.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { FakeBotApi, type SentMessage } from "../support/fake-telegram.js";
import { DEFAULT_TOOLS_OFF, harness, jsonOf } from "../support/project.js";
import { eventually } from "../support/wait.js";

const TOKEN = "123456:TEST-secret_token-abcdefghij";
const ALICE = { id: 1001, username: "alice" };
const MALLORY = { id: 666, username: "mallory" };
const KEY = `agent:main:telegram:${ALICE.id}`;

async function telegramGateway(runs: string[]) {
  const api = await FakeBotApi.start(TOKEN);
  onTestFinished(() => api.close());
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
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
    config: {
      tools: { ...DEFAULT_TOOLS_OFF, ask_user: { enabled: true }, touch: { approval: "ask" } },
      channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url }],
    },
  });
  expect(await h.runtime.start()).toEqual([]);
  return { api, h };
}

/** The message with buttons the bot sent to ask for approval. */
function asked(api: FakeBotApi): Promise<SentMessage> {
  return eventually(() => {
    const found = api.sent.find((m) => m.replyMarkup?.inline_keyboard);
    expect(found).toBeDefined();
    return found!;
  });
}

const buttons = (message: SentMessage): { text: string; callback_data: string }[] => message.replyMarkup.inline_keyboard.flat();

describe("approvals in a Telegram chat", () => {
  it("shows the call with Allow, Deny and Allow for this session; Alice's press allows it and the message says so, without buttons", async () => {
    const runs: string[] = [];
    const { api, h } = await telegramGateway(runs);
    api.message('CALL touch {"thing":"door"}', ALICE);
    const message = await asked(api);
    expect(message.chatId).toBe(String(ALICE.id));
    expect(message.text).toMatch(/^touch wants to run:\n\{\n {2}"thing": "door"\n\}/);
    expect(buttons(message).map((b) => b.text)).toEqual(["Allow", "Deny", "Allow for this session"]);
    expect(runs).toEqual([]);
    api.press(buttons(message)[0]!.callback_data, ALICE, message);
    await eventually(() => expect(api.textsIn(ALICE.id).some((t) => t.includes("touched door"))).toBe(true));
    expect(runs).toEqual(["door"]);
    await eventually(() => expect(message.edits).toBe(1));
    expect(message.text).toMatch(/Allowed \(telegram:1001\)$/);
    expect(message.replyMarkup).toBeUndefined();
    expect(api.callsOf("answerCallbackQuery")[0]!.payload).toMatchObject({ text: "Allowed" });
    const records = (await h.runtime.historyOf(KEY)).filter((m) => m.role === "system" && m.record);
    expect(records.map((m) => (m as unknown as { record: { by: string } }).record.by)).toEqual(["telegram:1001"]);
  });

  it("refuses a press by a user not in allow_from: nothing is decided, nothing runs; Deny by Alice then denies", async () => {
    const runs: string[] = [];
    const { api, h } = await telegramGateway(runs);
    api.message('CALL touch {"thing":"safe"}', ALICE);
    const message = await asked(api);
    api.press(buttons(message)[0]!.callback_data, MALLORY, message);
    await eventually(() => expect(api.callsOf("answerCallbackQuery")).toHaveLength(1));
    expect(api.callsOf("answerCallbackQuery")[0]!.payload).toMatchObject({ text: "You may not answer this." });
    expect(h.logger.lines.some((l) => l.level === "warn" && l.message.includes("user 666 (@mallory): not in channel_list[0].allow_from"))).toBe(true);
    expect(h.runtime.approvals.pending(KEY)).toHaveLength(1);
    expect(runs).toEqual([]);
    api.press(buttons(message)[1]!.callback_data, ALICE, message);
    await eventually(() => expect(api.textsIn(ALICE.id).some((t) => t.includes("The user declined to run touch"))).toBe(true));
    expect(runs).toEqual([]);
    await eventually(() => expect(message.text).toMatch(/Denied \(telegram:1001\)$/));
  });

  it("a decision made elsewhere (the API) edits the message too; a late press is told it was decided", async () => {
    const runs: string[] = [];
    const { api, h } = await telegramGateway(runs);
    api.message('CALL touch {"thing":"gate"}', ALICE);
    const message = await asked(api);
    const [, deny] = buttons(message);
    const [waiting] = h.runtime.approvals.pending(KEY);
    const res = await h.request(`/v1/sessions/${KEY}/approvals/${waiting!.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "allow" }),
    });
    expect((await jsonOf(res)).decision).toBe("allow");
    await eventually(() => expect(message.text).toMatch(/Allowed \(api\)$/));
    // The button stayed on Alice's screen until the edit reached it.
    api.press(deny!.callback_data, ALICE, message);
    await eventually(() => expect(api.callsOf("answerCallbackQuery")).toHaveLength(1));
    expect(api.callsOf("answerCallbackQuery")[0]!.payload.text).toMatch(/^Decided already: allowed \(api\)/);
    // The call runs once its decision is recorded.
    await eventually(() => expect(runs).toEqual(["gate"]));
  });
});

describe("exec from a Telegram chat", () => {
  it("is refused without asking while tools.exec.allow_remote is false: nobody is shown buttons for a call that cannot run", async () => {
    const api = await FakeBotApi.start(TOKEN);
    onTestFinished(() => api.close());
    const h = harness({
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      config: { channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url }] },
    });
    expect(await h.runtime.start()).toEqual([]);
    api.message(`CALL exec ${JSON.stringify({ action: "run", command: "echo hi" })}`, ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id).some((t) => t.includes("exec is restricted to internal channels"))).toBe(true));
    expect(api.sent.filter((m) => m.replyMarkup?.inline_keyboard)).toEqual([]);
  });
});

describe("ask_user in a Telegram chat", () => {
  it("sends the question with its options as a reply keyboard; the next message answers it", async () => {
    const { api } = await telegramGateway([]);
    api.message(`CALL ask_user ${JSON.stringify({ question: "Which day?", options: ["Monday", "Friday"] })}`, ALICE);
    const question = await eventually(() => {
      const found = api.sent.find((m) => m.replyMarkup?.keyboard);
      expect(found).toBeDefined();
      return found!;
    });
    expect(question.text).toBe("Which day?");
    expect(question.replyMarkup).toMatchObject({ keyboard: [[{ text: "Monday" }], [{ text: "Friday" }]], one_time_keyboard: true });
    api.message("Friday", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id).some((t) => t.includes("The user answered: Friday"))).toBe(true));
  });
});
