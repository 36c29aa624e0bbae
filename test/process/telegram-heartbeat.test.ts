/**
 * A heartbeat whose deliver_to is a Telegram chat: its answer arrives in the
 * chat of a user in allow_from before that user has written anything (the
 * channel listens to its users' private chats from the start).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { FakeBotApi } from "../support/fake-telegram.js";
import { harness } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { eventually } from "../support/wait.js";

const TOKEN = "123456:TEST-secret_token-abcdefghij";

describe("a heartbeat delivered to Telegram", () => {
  it("reaches the chat of a user in allow_from who has not written yet", async () => {
    const api = await FakeBotApi.start(TOKEN);
    onTestFinished(() => api.close());
    const timers = new ManualTimers();
    const h = harness({
      timer: timers.timer,
      env: { TELEGRAM_BOT_TOKEN: TOKEN },
      config: {
        heartbeat: { enabled: true, interval_minutes: 1, deliver_to: "telegram:1001" },
        channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [1001, "bob"], api_root: api.url }],
      },
    });
    mkdirSync(path.join(h.dir, "workspace"), { recursive: true });
    writeFileSync(path.join(h.dir, "workspace", "HEARTBEAT.md"), "- remind me to stretch\n");
    expect(await h.runtime.start()).toEqual([]);
    expect(timers.fireAll(60_000)).toBe(1);
    await eventually(() => expect(api.textsIn(1001).some((text) => text.includes("remind me to stretch"))).toBe(true));
  });
});
