/**
 * What a Telegram chat shows of a reply, against the fake Bot API: with
 * `streaming: true` one message sent with the first text and edited as the
 * model's text arrives (at most once per streaming_interval_ms, on the
 * test's timers; a 429 waits its retry_after; the final edit carries the
 * whole formatted reply, more messages past 4096 characters); and how
 * texts are formatted: JSON output as code (no bold inside), an empty plan
 * said to be empty, no `<!--` of the plan's data comments.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { EMPTY_PLAN } from "../../src/features/todo/command.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { FakeBotApi, type SentMessage } from "../support/fake-telegram.js";
import { completionChunk, fakeModelServers, sseChunks } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness, openaiConfig } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";

const TOKEN = "123456:STREAM-secret_token-abcdefghij";
const ALICE = { id: 1001, username: "alice" };
const INTERVAL = 1000;
const modelServer = fakeModelServers();

/** A gate the test opens: the model's next piece of text waits for it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A model that streams `pieces`, each after its gate (the first at once). */
async function streamingModel(pieces: string[]) {
  const gates = pieces.map(() => gate());
  gates[0]!.open();
  const model = await modelServer(() => ({
    chunks: sseChunks([
      ...pieces.map((content, i) => completionChunk(i === 0 ? { role: "assistant", content } : { content })),
      completionChunk({}, { finish: "stop" }),
    ]),
    beforeChunk: (index) => gates[index]?.opened,
  }));
  return { model, gates };
}

async function streamingGateway(pieces: string[], channel: Record<string, unknown> = {}) {
  const { model, gates } = await streamingModel(pieces);
  const api = await FakeBotApi.start(TOKEN);
  onTestFinished(() => api.close());
  const timers = new ManualTimers();
  const h = harness({
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
    timer: timers.timer,
    config: {
      ...openaiConfig(model.url),
      tools: DEFAULT_TOOLS_OFF,
      channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url, streaming: true, ...channel }],
    },
  });
  await h.runtime.start();
  return { api, h, timers, gates };
}

const message = (api: FakeBotApi): SentMessage => {
  const sent = api.sent.filter((m) => m.chatId === String(ALICE.id));
  expect(sent).toHaveLength(1);
  return sent[0]!;
};

describe("a streamed reply in Telegram", () => {
  it("is one message, edited as the text arrives at most once per interval, the final edit carrying the whole formatted reply", async () => {
    const { api, timers, gates } = await streamingGateway(["Hello ", "**wor", "ld** and ", "more."]);
    api.message("hi", ALICE);
    const shown = await eventually(() => {
      expect(message(api).text).toBe("Hello ");
      return message(api);
    });
    // The next edit waits for the interval.
    await eventually(() => expect(timers.pending(INTERVAL)).toHaveLength(1));
    gates[1]!.open();
    await eventually(() => {
      timers.fireAll(INTERVAL);
      expect(shown.edits).toBe(1);
    });
    expect(shown.text).toBe("Hello **wor");
    // Nothing new: the interval runs out without an edit.
    timers.fireAll(INTERVAL);
    expect(api.callsOf("editMessageText")).toHaveLength(1);
    gates[2]!.open();
    gates[3]!.open();
    // The answer ends the draft at once (no waiting for the interval): the whole reply, formatted.
    await eventually(() => expect(shown.raw).toBe("Hello <b>world</b> and more."));
    expect(shown.parseMode).toBe("HTML");
    expect(api.textsIn(ALICE.id)).toEqual(["Hello world and more."]);
    expect(api.callsOf("editMessageText").length).toBe(shown.edits);
    expect(shown.edits).toBeLessThanOrEqual(3);
    expect(timers.pending(INTERVAL)).toEqual([]);
  });

  it("waits the retry_after of a 429 before the next edit, without retrying the edit itself", async () => {
    const { api, timers, gates } = await streamingGateway(["Hello ", "there", ", friend."]);
    api.fail("editMessageText", { status: 429, description: "Too Many Requests: retry after 7", retry_after: 7 });
    api.message("hi", ALICE);
    await eventually(() => expect(message(api).text).toBe("Hello "));
    gates[1]!.open();
    await eventually(() => {
      timers.fireAll(INTERVAL);
      expect(api.callsOf("editMessageText")).toHaveLength(1);
    });
    await eventually(() => expect(timers.pending(7000)).toHaveLength(1));
    expect(message(api).edits).toBe(0);
    gates[2]!.open();
    await eventually(() => expect(message(api).text).toBe("Hello there, friend."));
    expect(api.textsIn(ALICE.id)).toHaveLength(1);
  });

  it("takes 'message is not modified' as done, and past 4096 characters sends the rest as more messages", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `line ${i} ${"z".repeat(90)}`).join("\n");
    const { api, h, timers, gates } = await streamingGateway(["Start\n", "more\n", long]);
    api.fail("editMessageText", { status: 400, description: "Bad Request: message is not modified: specified new message content is exactly the same" });
    api.message("hi", ALICE);
    await eventually(() => expect(message(api).text).toBe("Start\n"));
    gates[1]!.open();
    await eventually(() => {
      if (api.callsOf("editMessageText").length === 0) timers.fireAll(INTERVAL);
      expect(api.callsOf("editMessageText")).toHaveLength(1);
    });
    // Not an error: the draft goes on (the next edit waits for the interval).
    await eventually(() => expect(timers.pending(INTERVAL)).toHaveLength(1));
    gates[2]!.open();
    await eventually(() => expect(api.textsIn(ALICE.id).length).toBeGreaterThan(1));
    const texts = api.textsIn(ALICE.id);
    expect(texts.join("\n")).toBe(`Start\nmore\n${long}`);
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(4096);
    expect(h.logger.lines.map((l) => l.message).join("\n")).not.toContain("streaming to chat");
  });
});

describe("texts in Telegram", () => {
  const shopping = defineTool({
    name: "shopping",
    description: "The shopping list as JSON.",
    parameters: z.strictObject({}),
    enabledByDefault: true,
    execute: () => toolResult.user('{"items":[{"content":"**milk**","done":false}]}'),
  });

  async function builtinGateway() {
    const api = await FakeBotApi.start(TOKEN);
    onTestFinished(() => api.close());
    const h = harness({
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      tools: [shopping],
      config: {
        tools: { ...DEFAULT_TOOLS_OFF, todo: { enabled: true } },
        channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url }],
      },
    });
    await h.runtime.start();
    return { api, h };
  }

  it("a tool's JSON output goes as a code block: **milk** in it is not bold", async () => {
    const { api } = await builtinGateway();
    api.message("CALL shopping {}", ALICE);
    const json = await eventually(() => {
      const found = api.sent.find((m) => m.text.includes("milk"));
      expect(found).toBeDefined();
      return found!;
    });
    expect(json.raw).toBe('<pre><code class="language-json">{"items":[{"content":"**milk**","done":false}]}</code></pre>');
    expect(json.text).toBe('{"items":[{"content":"**milk**","done":false}]}');
  });

  it("/todo of an empty plan says the plan is empty; a plan shows no <!-- data comments", async () => {
    const { api } = await builtinGateway();
    api.message("/todo", ALICE);
    await eventually(() =>
      expect(api.textsIn(ALICE.id)).toEqual([
        `${EMPTY_PLAN} Write one with /todo edit and the plan in Markdown on the next lines:\n\n/todo edit\n- [ ] a task`,
      ]),
    );
    api.message("/todo edit\n# Todos\n- [ ] buy **milk**\n- [x] call mum", ALICE);
    await eventually(() => expect(api.textsIn(ALICE.id)).toHaveLength(2));
    const shown = api.textsIn(ALICE.id)[1]!;
    expect(shown).toContain("buy milk");
    expect(shown).not.toContain("<!--");
    expect(shown).not.toContain(EMPTY_PLAN);
  });
});
