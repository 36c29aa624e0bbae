import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { type Bound, type TailFile, readHistoryTail } from "../../src/session/jsonl/history-tail.js";
import { parseTranscript, repairToolPairs, toLines } from "../../src/session/jsonl/transcript.js";
import { SessionCache } from "../../src/session/session-cache.js";

/** A history file in memory that counts the bytes read from it. */
function countingFile(text: string): TailFile & { bytesRead: number } {
  const bytes = Buffer.from(text, "utf8");
  const file = {
    size: bytes.length,
    bytesRead: 0,
    read: async (position: number, length: number) => {
      const part = bytes.subarray(position, Math.min(bytes.length, position + length));
      file.bytesRead += part.length;
      return new Uint8Array(part);
    },
  };
  return file;
}

/** The session's limits, as the store applies them to what it reads back. */
function limits(maxMessages: number, maxBytes: number): Bound {
  return (messages) => {
    const scratch = new SessionCache({ maxMessages, maxBytes, maxSessions: 1, maxTotalBytes: Number.POSITIVE_INFINITY });
    const outcome = scratch.restore("", messages, 0);
    return { messages: scratch.get(""), trimmed: outcome.dropped > 0 || outcome.fitted };
  };
}

/** What a whole read of the file gives (history-file.ts's read, then the store's limits). */
function wholeRead(text: string, bound: Bound): ChatMessage[] {
  return bound(repairToolPairs(parseTranscript(text, "f.jsonl").messages, "f.jsonl").messages).messages;
}

const user = (text: string): ChatMessage => ({ role: "user", content: text });
const reply = (text: string): ChatMessage => ({ role: "assistant", content: text });
const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name: "t", arguments: "{}" } }],
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: `result ${id}` });
const record: ChatMessage = { role: "system", content: "approved", record: { kind: "approval" } } as unknown as ChatMessage;

describe("a history page read from the end of its file", () => {
  it("a 1-message tail of a multi-MiB file reads a small fraction of it, and is the last message of a whole read", async () => {
    const exchanges: ChatMessage[] = [];
    for (let i = 0; i < 4000; i++)
      exchanges.push(user(`question ${i} ${"q".repeat(500)}`), call(`c${i}`), result(`c${i}`), reply(`answer ${i} ${"a".repeat(500)}`));
    const text = toLines(exchanges);
    const file = countingFile(text);
    expect(file.size).toBeGreaterThan(4 * 1024 * 1024);
    const bound = limits(100_000, 64 * 1024 * 1024);
    const tail = await readHistoryTail(file, 1, { fileName: "f.jsonl", bound });
    expect(tail.messages.slice(-1)).toEqual(wholeRead(text, bound).slice(-1));
    expect(tail.whole).toBe(false);
    expect(file.bytesRead).toBe(tail.bytesRead);
    expect(file.bytesRead).toBeLessThan(file.size / 50);
  });

  it("a tail of 200 of them reads about their bytes, not the file's", async () => {
    const lines: ChatMessage[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(user(`u${i} ${"x".repeat(200)}`), reply(`r${i}`));
    const text = toLines(lines);
    const file = countingFile(text);
    const tail = await readHistoryTail(file, 200, { fileName: "f.jsonl", bound: limits(100_000, 64 * 1024 * 1024) });
    expect(tail.messages.slice(-200)).toEqual(lines.slice(-200));
    const last200 = Buffer.byteLength(toLines(lines.slice(-200)));
    expect(file.bytesRead).toBeLessThan(4 * last200 + 64 * 1024);
  });

  it("a tail that reaches past what the session's limits keep is all the session keeps (its total known); a shorter one is not said to be", async () => {
    const lines: ChatMessage[] = [];
    for (let i = 0; i < 3000; i++) lines.push(user(`u${i}`), reply(`r${i}`));
    const text = toLines(lines);
    const bound = limits(50, 64 * 1024 * 1024);
    const past = await readHistoryTail(countingFile(text), 60, { fileName: "f.jsonl", bound });
    expect(past.whole).toBe(true);
    expect(past.messages).toEqual(wholeRead(text, bound));
    const short = await readHistoryTail(countingFile(text), 10, { fileName: "f.jsonl", bound });
    expect(short.whole).toBe(false);
    expect(short.messages.slice(-10)).toEqual(wholeRead(text, bound).slice(-10));
  });

  // Damaged files as the whole read meets them (transcript.ts): each tail is the end of what a whole read gives.
  const damaged: Record<string, string> = {
    "lines that are not JSON or not messages": `${toLines([user("a"), reply("b")])}not json\n{"role":"nobody"}\n${toLines([user("c"), reply("d")])}{"oops"\n${toLines([user("e"), reply("f")])}`,
    "a torn end: the start of a user message": `${toLines([user("a"), reply("b"), user("c"), reply("d")])}{"role":"user","cont`,
    "a torn end after a complete turn": `${toLines([user("a"), reply("b"), user("c"), reply("d")])}{"role":"assistant","cont`,
    "a torn end in a turn that never finished": `${toLines([user("a"), reply("b"), user("c"), call("k")])}{"role":"tool","tool_call_id":"k","con`,
    "NUL padding after the last line": `${toLines([user("a"), reply("b"), user("c"), reply("d")])}\0\0\0\0\0\0`,
    "results without their call, calls without their result": toLines([
      user("a"),
      result("zz"),
      call("x"),
      user("b"),
      call("y"),
      result("y"),
      reply("c"),
      call("w"),
      user("d"),
      reply("e"),
    ]),
    "records before a turn": toLines([user("a"), reply("b"), record, user("c"), reply("d"), record]),
    "a byte-order mark and a first line that is no user message": `\uFEFF${toLines([reply("stray"), user("a"), reply("b"), user("c"), reply("d")])}`,
    "blank and CRLF lines": `${toLines([user("a"), reply("b")]).replace(/\n/g, "\r\n")}\n\n   \n${toLines([user("c"), reply("d")])}`,
  };
  for (const [what, text] of Object.entries(damaged)) {
    it(`with ${what}, every tail is the end of a whole read`, async () => {
      const bound = limits(100_000, 64 * 1024 * 1024);
      const whole = wholeRead(text, bound);
      for (let limit = 1; limit <= whole.length + 2; limit++) {
        for (const firstChunk of [1, 7, 64 * 1024]) {
          const tail = await readHistoryTail(countingFile(text), limit, { fileName: "f.jsonl", bound, firstChunk });
          expect(tail.messages.slice(-limit), `${what}, limit ${limit}, chunk ${firstChunk}`).toEqual(whole.slice(-limit));
          if (tail.whole) expect(tail.messages).toEqual(whole);
        }
      }
    });
  }

  it("any file of messages, damaged lines and a torn end reads back as the end of a whole read (property)", async () => {
    const line = fc.oneof(
      fc.string({ maxLength: 12 }).map((t) => JSON.stringify(user(t))),
      fc.string({ maxLength: 12 }).map((t) => JSON.stringify(reply(t))),
      fc.constantFrom("a", "b", "c").map((id) => JSON.stringify(call(id))),
      fc.constantFrom("a", "b", "c").map((id) => JSON.stringify(result(id))),
      fc.constant(JSON.stringify(record)),
      fc.constantFrom("not json", '{"role":"x"}', "", "\0\0"),
    );
    const torn = fc.constantFrom("", '{"role":"user","con', '{"role":"assistant","c', '{"role":"tool"', "\0\0\0", "garbage");
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 40 }),
        torn,
        fc.integer({ min: 1, max: 45 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 4, max: 60 }),
        fc.constantFrom(300, 1000, 64 * 1024 * 1024),
        async (lines, end, limit, firstChunk, maxMessages, maxBytes) => {
          const text = `${lines.map((l) => `${l}\n`).join("")}${end}`;
          const bound = limits(maxMessages, maxBytes);
          const whole = wholeRead(text, bound);
          const tail = await readHistoryTail(countingFile(text), limit, { fileName: "f.jsonl", bound, firstChunk });
          expect(tail.messages.slice(-limit)).toEqual(whole.slice(-limit));
          if (tail.whole) expect(tail.messages).toEqual(whole);
        },
      ),
      { numRuns: 400 },
    );
  });
});
