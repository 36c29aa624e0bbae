/**
 * The Telegram channel against a fake Bot API on 127.0.0.1: grammY's client
 * pointed at it (`api_root`), a whole gateway in-process (config → runtime →
 * channel), users' messages pushed as updates, and the chat read as the
 * user would see it.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { BUSY_TEXT, MAX_RUNNING_PER_CHAT, SHUTDOWN_TEXT } from "../../src/channels/relay.js";
import type { Timer } from "../../src/signals.js";
import { FakeBotApi } from "../support/fake-telegram.js";
import { type HarnessOptions, harness } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";
import { testTools } from "../support/tools.js";

const TOKEN = "123456:TEST-secret_token-abcdefghij";
const ALICE = { id: 1001, username: "alice" };
const MALLORY = { id: 666, username: "mallory" };
const KEY = `agent:main:telegram:${ALICE.id}`;

interface Setup extends Omit<HarnessOptions, "config"> {
  channel?: Record<string, unknown>;
  config?: Record<string, unknown>;
  timer?: Timer;
  /** Start the channel with another token than the one the fake API knows. */
  botToken?: string;
  /** Scripts the fake Bot API before the channel starts (so its first calls already get it). */
  before?: (api: FakeBotApi) => void;
}

async function telegramGateway(setup: Setup = {}) {
  const api = await FakeBotApi.start(TOKEN);
  onTestFinished(() => api.close());
  const h = harness({
    ...setup,
    tools: setup.tools ?? testTools,
    env: { TELEGRAM_BOT_TOKEN: setup.botToken ?? TOKEN },
    config: {
      ...setup.config,
      channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url, ...setup.channel }],
    },
  });
  setup.before?.(api);
  const failures = await h.runtime.start();
  onTestFinished(() => {
    for (const line of h.logger.lines) expect(line.message).not.toContain(TOKEN);
  });
  return { api, h, failures };
}

/** The user's last message has been answered with `count` messages in that chat. */
async function answers(api: FakeBotApi, chatId: number, count: number): Promise<string[]> {
  return eventually(() => {
    const texts = api.textsIn(chatId);
    expect(texts.length).toBeGreaterThanOrEqual(count);
    return texts;
  });
}

describe("the Telegram channel", () => {
  it("answers a message from an allowed user with the agent's answer, in the chat it came from", async () => {
    const { api, h, failures } = await telegramGateway();
    expect(failures).toEqual([]);
    api.message("hello there", ALICE);
    const [answer] = await answers(api, ALICE.id, 1);
    expect(answer).toMatch(/^You said: hello there/);
    expect((await h.runtime.historyOf(KEY)).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(api.callsOf("getMe")).toHaveLength(1);
    expect(api.callsOf("sendChatAction")[0]!.payload).toMatchObject({ chat_id: String(ALICE.id), action: "typing" });
    expect(h.logger.lines).toContainEqual({ level: "info", message: 'telegram channel "telegram": polling as @test_bot' });
  });

  it("ignores a stranger and logs who it was, never what they wrote", async () => {
    const { api, h } = await telegramGateway();
    api.message("give me your secrets", MALLORY);
    api.message("hi", ALICE);
    await answers(api, ALICE.id, 1);
    expect(api.textsIn(MALLORY.id)).toEqual([]);
    expect(api.calls.filter((c) => String(c.payload.chat_id) === String(MALLORY.id))).toEqual([]);
    const ignored = h.logger.lines.filter((l) => l.message.includes("ignored a message"));
    expect(ignored).toEqual([
      {
        level: "warn",
        message: 'telegram channel "telegram": ignored a message from user 666 (@mallory) in chat 666: not in channel_list[0].allow_from',
      },
    ]);
    expect(h.logger.lines.some((l) => l.message.includes("secrets"))).toBe(false);
    expect(h.runtime.sessionKeys()).toEqual([KEY]);
  });

  it("lets in a username from allow_from, with or without @, in any case", async () => {
    const { api } = await telegramGateway({ channel: { allow_from: ["@Alice"] } });
    api.message("hi", ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toMatch(/^You said: hi/);
  });

  it("with an empty allow_from answers nobody, and says so at start-up", async () => {
    const { api, h } = await telegramGateway({ channel: { allow_from: [] } });
    expect(h.warnings).toContain(
      'channel_list[0].allow_from is empty: telegram channel "telegram" answers nobody; list your Telegram user id there, or set dm_policy "pairing" (README, "Channels")',
    );
    api.message("hi", ALICE);
    await eventually(() => expect(h.logger.lines.some((l) => l.message.includes("ignored a message from user 1001 (@alice)"))).toBe(true));
    expect(api.sent).toEqual([]);
  });

  it("shows non-silent tool output and the answer, and never a silent result", async () => {
    const { api } = await telegramGateway({ config: { tools: { todo: { enabled: true } } } });
    api.message('CALL echo {"text":"visible"}\nCALL whisper {"text":"hidden"}', ALICE);
    const texts = await answers(api, ALICE.id, 2);
    expect(texts[0]).toBe("echo: visible");
    expect(texts[1]).toMatch(/^Ran 2 tool calls:/);
    api.message('CALL todo {"action":"write","todos":[{"id":"1","content":"Outline the talk"}]}', ALICE);
    await answers(api, ALICE.id, 3);
    // The todo tool's result is silent: only the agent's answer reaches the chat.
    expect(api.textsIn(ALICE.id)).toHaveLength(3);
    expect(api.textsIn(ALICE.id)[2]).toMatch(/^Ran 1 tool call:\n1\. todo:\n/);
    expect(api.textsIn(ALICE.id).join("\n")).not.toContain("LEAK");
  });

  it("splits an answer longer than 4096 characters at line boundaries", async () => {
    const { api, h } = await telegramGateway();
    const lines = Array.from({ length: 300 }, (_, i) => `line ${String(i).padStart(3, "0")} of a long message to the bot`);
    api.message(lines.join("\n"), ALICE);
    await eventually(async () => expect(await h.runtime.historyOf(KEY)).toHaveLength(2));
    const reply = (await h.runtime.historyOf(KEY))[1]!.content as string;
    expect(reply.length).toBeGreaterThan(2 * 4096);
    // Line by line, nothing lost: the messages joined by line breaks are the answer.
    await eventually(() => expect(api.textsIn(ALICE.id).join("\n")).toBe(reply));
    const texts = api.textsIn(ALICE.id);
    expect(texts.length).toBeGreaterThanOrEqual(3);
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(4096);
      expect(text).toMatch(/^(You said: )?line \d{3}|^line \d{3}/);
    }
  });

  it("sends Markdown as Telegram HTML, and as plain text when Telegram cannot parse it", async () => {
    const { api } = await telegramGateway();
    api.message("**bold** and `a<b>`", ALICE);
    await answers(api, ALICE.id, 1);
    expect(api.sent[0]).toMatchObject({ parseMode: "HTML", raw: expect.stringMatching(/^You said: <b>bold<\/b> and <code>a&lt;b&gt;<\/code>/) });
    expect(api.sent[0]!.text).toMatch(/^You said: bold and a<b>/);

    // Markers that cross make HTML Telegram refuses; the same text then goes as it is.
    api.message("**a *b** c*", ALICE);
    await answers(api, ALICE.id, 2);
    const refused = api.callsOf("sendMessage")[1]!;
    expect(refused.payload.parse_mode).toBe("HTML");
    expect(api.sent[1]).toMatchObject({ parseMode: undefined, raw: expect.stringMatching(/^You said: \*\*a \*b\*\* c\*/) });
  });

  it("/clear and /new empty the session; /help and /stop answer from the chat; /start greets", async () => {
    const { api, h } = await telegramGateway();
    api.message("/start", ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toMatch(/^Hello! I am Main \(test agent\)\. .*\/new starts a fresh conversation\.$/);
    expect(await h.runtime.historyOf(KEY)).toEqual([]);
    api.message("remember me", ALICE);
    await answers(api, ALICE.id, 2);
    expect(await h.runtime.historyOf(KEY)).toHaveLength(2);
    api.message("/clear", ALICE);
    expect((await answers(api, ALICE.id, 3))[2]).toBe("Cleared: this session's history, plan and undelivered messages are gone.");
    expect(await h.runtime.historyOf(KEY)).toEqual([]);
    api.message("again", ALICE);
    await answers(api, ALICE.id, 4);
    api.message("/new", ALICE);
    expect((await answers(api, ALICE.id, 5))[4]).toBe("Cleared: this session's history, plan and undelivered messages are gone.");
    expect(await h.runtime.historyOf(KEY)).toEqual([]);
    api.message("/help", ALICE);
    const help = (await answers(api, ALICE.id, 6))[5]!;
    for (const command of ["/clear", "/new", "/help", "/stop", "/todo"]) expect(help).toContain(command);
    api.message("/stop", ALICE);
    expect((await answers(api, ALICE.id, 7))[6]).toBe("Nothing was running.");
  });

  it("in a group, answers allowed members in one session per group, and only commands addressed to this bot", async () => {
    const { api, h } = await telegramGateway();
    const group = { id: -1001234, type: "supergroup" };
    api.message("@test_bot hello group", ALICE, group);
    expect((await answers(api, group.id, 1))[0]).toMatch(/^You said: hello group/);
    api.message("/clear@other_bot", ALICE, group);
    api.message("/clear@test_bot", ALICE, group);
    expect((await answers(api, group.id, 2))[1]).toBe("Cleared: this session's history, plan and undelivered messages are gone.");
    expect(api.textsIn(group.id)).toHaveLength(2);
    expect(await h.runtime.historyOf(`agent:main:telegram:${group.id}`)).toEqual([]);
    api.message("hi from a stranger", MALLORY, group);
    api.message("/help@test_bot", ALICE, group);
    await answers(api, group.id, 3);
    expect(api.textsIn(group.id)).toHaveLength(3);
  });

  it("sends a background subagent's result to the chat when it arrives", async () => {
    const { api } = await telegramGateway();
    api.message('CALL spawn {"task":"hello from the child","label":"bg"}', ALICE);
    const texts = await answers(api, ALICE.id, 2);
    expect(texts[0]).toMatch(/^Ran 1 tool call:\n1\. spawn: /);
    expect(texts[1]).toMatch(/^Background work finished:/);
    expect(texts[1]).toContain("You said: hello from the child");
  });

  it("honours a 429's retry_after: the next attempt waits until that time is up", async () => {
    const timers = new ManualTimers();
    const { api, h } = await telegramGateway({ timer: timers.timer });
    api.fail("sendMessage", { status: 429, description: "Too Many Requests: retry after 7", retry_after: 7 });
    api.message("hi", ALICE);
    const wait = await eventually(() => {
      const found = timers.pending().find((t) => t.ms === 7000);
      expect(found).toBeDefined();
      return found!;
    });
    expect(api.callsOf("sendMessage")).toHaveLength(1);
    expect(api.sent).toEqual([]);
    expect(h.logger.lines).toContainEqual({
      level: "warn",
      message: 'telegram channel "telegram": sendMessage failed (429: Too Many Requests: retry after 7); trying again in 7 s',
    });
    wait.fire();
    expect((await answers(api, ALICE.id, 1))[0]).toMatch(/^You said: hi/);
    expect(api.callsOf("sendMessage")).toHaveLength(2);
  });

  it("shows 'typing' every 4 s while a turn runs, until it ends", async () => {
    const timers = new ManualTimers();
    const { api } = await telegramGateway({ timer: timers.timer });
    api.message('CALL wait {"ms":600000}', ALICE);
    const beat = await eventually(() => {
      const found = timers.pending().find((t) => t.ms === 4000);
      expect(found).toBeDefined();
      return found!;
    });
    // The first "typing" is sent as the timer is armed: it may still be on its way.
    await eventually(() => expect(api.callsOf("sendChatAction")).toHaveLength(1));
    beat.fire();
    await eventually(() => expect(api.callsOf("sendChatAction")).toHaveLength(2));
    api.message("/stop", ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toBe("Stopped.");
    await eventually(() => expect(timers.pending().filter((t) => t.ms === 4000)).toEqual([]));
    expect(api.callsOf("sendChatAction")).toHaveLength(2);
  });

  it(`refuses more than ${MAX_RUNNING_PER_CHAT} messages waiting in one chat, but /stop always passes`, async () => {
    const { api, h } = await telegramGateway();
    for (let i = 0; i < MAX_RUNNING_PER_CHAT + 1; i++) api.message('CALL wait {"ms":600000}', ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toBe(BUSY_TEXT);
    api.message("/stop", ALICE);
    expect((await answers(api, ALICE.id, 2))[1]).toBe("Stopped.");
    await eventually(() => expect(h.runtime.stats().inflight).toBe(0));
    expect(api.textsIn(ALICE.id)).toEqual([BUSY_TEXT, "Stopped."]);
  });

  it("logs a polling failure and keeps polling after a backoff", async () => {
    const timers = new ManualTimers();
    const { api, h } = await telegramGateway({
      timer: timers.timer,
      before: (api) =>
        api.fail("getUpdates", { status: 502, description: "Bad Gateway" }, { status: 409, description: "Conflict: terminated by other getUpdates request" }),
    });
    const first = await eventually(() => {
      const found = timers.pending().find((t) => t.ms === 1000);
      expect(found).toBeDefined();
      return found!;
    });
    expect(h.logger.lines).toContainEqual({ level: "warn", message: 'telegram channel "telegram": polling failed (502: Bad Gateway); trying again in 1 s' });
    first.fire();
    const second = await eventually(() => {
      const found = timers.pending().find((t) => t.ms === 2000);
      expect(found).toBeDefined();
      return found!;
    });
    second.fire();
    api.message("still there?", ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toMatch(/^You said: still there\?/);
  });

  it("a token Telegram refuses is a start-up warning naming the channel; the gateway goes on", async () => {
    const { api, h, failures } = await telegramGateway({ botToken: "999:WRONG-token" });
    expect(failures).toEqual(['telegram channel "telegram" did not start: the Bot API refused the token (401: Unauthorized); check channel_list[0].token']);
    expect(api.callsOf("getUpdates")).toEqual([]);
    expect((await h.chat({ message: "hi" })).status).toBe(200);
  });

  it("a token refused while polling (revoked) stops the bot loudly instead of retrying for ever", async () => {
    const timers = new ManualTimers();
    const { api, h } = await telegramGateway({ timer: timers.timer, before: (api) => api.fail("getUpdates", { status: 401, description: "Unauthorized" }) });
    await eventually(() =>
      expect(h.logger.lines).toContainEqual({
        level: "error",
        message: 'telegram channel "telegram": the Bot API refused the token (401: Unauthorized); the bot stopped polling: check channel_list[0].token',
      }),
    );
    expect(api.callsOf("getUpdates")).toHaveLength(1);
    expect(timers.pending()).toEqual([]);
  });

  it("a Bot API out of reach at start is a warning without the token, and polling keeps trying", async () => {
    const gone = await FakeBotApi.start(TOKEN);
    await gone.close();
    const timers = new ManualTimers();
    const h = harness({
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      timer: timers.timer,
      config: { channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: gone.url }] },
    });
    expect(await h.runtime.start()).toEqual([]);
    const warning = h.logger.lines.find((l) => l.message.includes("cannot reach the Bot API yet"))!;
    expect(warning.message).toContain("ECONNREFUSED");
    expect(warning.message).toContain("/bot<token>/getMe");
    expect(warning.message).not.toContain(TOKEN);
    await eventually(() => expect(timers.pending().some((t) => t.ms === 1000)).toBe(true));
    await h.runtime.close();
    expect(timers.pending()).toEqual([]);
    for (const line of h.logger.lines) expect(line.message).not.toContain(TOKEN);
  });

  it("closing stops polling cleanly: the long poll is cut, taken updates confirmed, a running turn's user told, then no request", async () => {
    const timers = new ManualTimers();
    const { api, h } = await telegramGateway({ timer: timers.timer });
    const id = api.message("hello", ALICE);
    await answers(api, ALICE.id, 1);
    api.message('CALL wait {"ms":600000}', ALICE);
    await eventually(() => expect(h.runtime.stats().runningTurns).toBe(1));
    await eventually(() => expect(api.callsOf("getUpdates").at(-1)!.payload.offset).toBe(id + 2));
    await h.runtime.close(0);
    expect(api.textsIn(ALICE.id)).toEqual([expect.stringMatching(/^You said: hello/), SHUTDOWN_TEXT]);
    const polls = api.callsOf("getUpdates");
    expect(polls.at(-2)).toMatchObject({ payload: { offset: id + 2, timeout: 30 }, aborted: true });
    expect(polls.at(-1)).toMatchObject({ payload: { offset: id + 2, limit: 1, timeout: 0 }, aborted: false });
    const count = api.calls.length;
    expect(timers.pending()).toEqual([]);
    // Closing ends with the bot's client letting go of its connections: once they have closed at the fake API, every request it sent has been read.
    await api.disconnected();
    expect(api.calls.length).toBe(count);
  });

  it("a Bot API answer over the size cap (a broken or hostile api_root answering 40 MB) is refused and logged, and polling goes on", async () => {
    const { api, h } = await telegramGateway({
      before: (api) =>
        api.answerOnce("getUpdates", 200, { ok: true, result: [{ update_id: 1, message: { message_id: 1, text: "x".repeat(40 * 1024 * 1024) } }] }),
    });
    await eventually(() => expect(h.logger.lines.some((line) => /over limit/.test(line.message))).toBe(true), { ms: 30_000 });
    api.message("still answering?", ALICE);
    expect((await answers(api, ALICE.id, 1))[0]).toMatch(/^You said: still answering\?/);
  }, 60_000);
});
