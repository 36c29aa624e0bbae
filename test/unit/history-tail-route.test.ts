import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { toLines } from "../../src/session/jsonl/transcript.js";
import { type Harness, harness, jsonOf } from "../support/project.js";

/**
 * GET /v1/sessions/<key>/history?limit=N of a session on disk and not in
 * memory (a file the gateway found at start-up) reads the file from its end;
 * its answer is the last N of a whole read, whatever the file holds.
 */

const KEY = "agent:main:http:disk";
const FILE = "sessions/agent_main_http_disk.jsonl";

const user = (text: string): ChatMessage => ({ role: "user", content: text });
const reply = (text: string): ChatMessage => ({ role: "assistant", content: text });
const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "t", arguments: "{}" } }],
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: `result ${id}` });

/** Exchanges big enough that the file is many reads from the end (its first read is 64 KiB). */
function exchanges(count: number, from = 0): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = from; i < from + count; i++) out.push(user(`q${i} ${"x".repeat(900)}`), call(`c${i}`), result(`c${i}`), reply(`a${i} ${"y".repeat(900)}`));
  return out;
}

const page = async (h: Harness, limit: number): Promise<{ messages: ChatMessage[]; total: number }> =>
  jsonOf(await h.request(`/v1/sessions/${KEY}/history?limit=${limit}`));

/** A gateway that finds `text` as the session's file at start-up. */
function gatewayWith(text: string, config: Record<string, unknown> = {}): Harness {
  return harness({ config, files: { [FILE]: text } });
}

const files: Record<string, string> = {
  "a clean file": toLines(exchanges(300)),
  "damaged lines in the middle": `${toLines(exchanges(150))}not json\n{"role":"nobody"}\n{"role":"tool","tool_call_id":"zz","content":"orphan"}\n${toLines(exchanges(150, 150))}`,
  "a torn end: the start of a user message": `${toLines(exchanges(300))}{"role":"user","content":"cut sh`,
  "a torn end after a complete turn": `${toLines(exchanges(300))}{"role":"assistant","content":"cut sh`,
  "a torn end in a turn that never finished": `${toLines([...exchanges(300), user("unfinished"), call("k")])}{"role":"tool","tool_call_id":"k","con`,
  "NUL padding at the end": `${toLines(exchanges(300))}${"\0".repeat(4096)}`,
  "calls whose results are missing at the end": toLines([...exchanges(300), user("last"), call("lost1"), reply("went on")]),
};

describe("a history page of a session on disk, read from the end of its file", () => {
  for (const [what, text] of Object.entries(files)) {
    it(`with ${what}: ?limit=N is the last N of a whole read, with the same total`, async () => {
      const h = gatewayWith(text);
      // The whole of what the session keeps (1000 is the most a page holds: more than this file has).
      const whole = await page(h, 1000);
      expect(whole.total).toBe(whole.messages.length);
      // The session keeps its last 500 (agents.defaults.max_history_messages), of some 1200 in the file.
      expect(whole.total).toBeGreaterThan(450);
      for (const limit of [1, 2, 3, 4, 5, 7, 50, 333, 999]) {
        const tail = await page(h, limit);
        expect(tail.messages, `limit ${limit}`).toEqual(whole.messages.slice(-limit));
        expect(tail.total, `limit ${limit}`).toBe(whole.total);
      }
      // Reading is not using: the session is still not in memory.
      expect(h.runtime.stats().sessions).toBe(0);
      await h.runtime.close(0);
    });
  }

  it("the first page after start-up, with no meta file to tell the total, is right too (the file read whole once)", async () => {
    const h = gatewayWith(files["damaged lines in the middle"]!);
    const first = await page(h, 3);
    const whole = await page(h, 1000);
    expect(first).toEqual({ messages: whole.messages.slice(-3), total: whole.total });
    await h.runtime.close(0);
  });

  it("with the session's limits smaller than the file (max_history_messages), the pages are what the session keeps", async () => {
    const h = gatewayWith(toLines(exchanges(300)), { agents: { defaults: { max_history_messages: 40 } } });
    const whole = await page(h, 1000);
    expect(whole.total).toBe(40);
    for (const limit of [1, 39, 40, 41]) expect(await page(h, limit)).toEqual({ messages: whole.messages.slice(-limit), total: 40 });
    await h.runtime.close(0);
  });
});
