/**
 * A failed todo call as a Telegram user sees it: one line saying the plan
 * may be stale (the model's result is unchanged), once per run of failures.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { TODO_FAILED } from "../../src/features/todo/failures.js";
import { script } from "../../src/testing.js";
import { FakeBotApi } from "../support/fake-telegram.js";
import { DEFAULT_TOOLS_OFF, harness } from "../support/project.js";
import { eventually } from "../support/wait.js";

const TOKEN = "123456:TEST-secret_token-abcdefghij";
const ALICE = { id: 1001, username: "alice" };

async function telegramGateway() {
  const api = await FakeBotApi.start(TOKEN);
  onTestFinished(() => api.close());
  const h = harness({
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
    config: {
      tools: { todo: { enabled: true, style: "phases" }, ...DEFAULT_TOOLS_OFF },
      channel_list: [{ type: "telegram", token: "${TELEGRAM_BOT_TOKEN}", allow_from: [ALICE.id], api_root: api.url }],
    },
  });
  expect(await h.runtime.start()).toEqual([]);
  return { api, h };
}

describe("a failed todo call in Telegram", () => {
  it("the chat gets one 'Todo update failed' line before the answer, and none for a successful call", async () => {
    const { api } = await telegramGateway();
    api.message(script(["todo", { op: "done", task: "nope" }], ["todo", { op: "view" }]), ALICE);
    const texts = await eventually(() => {
      const all = api.textsIn(ALICE.id);
      expect(all.length).toBeGreaterThanOrEqual(2);
      return all;
    });
    expect(texts[0]).toBe(TODO_FAILED);
    expect(texts.filter((t) => t.startsWith("Todo update failed"))).toHaveLength(1);
    api.message(script(["todo", { op: "init", items: ["a1"] }]), ALICE);
    const after = await eventually(() => {
      const all = api.textsIn(ALICE.id);
      expect(all.length).toBeGreaterThanOrEqual(3);
      return all;
    });
    expect(after.filter((t) => t.startsWith("Todo update failed"))).toHaveLength(1);
  });
});
