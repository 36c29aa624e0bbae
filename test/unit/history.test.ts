import { describe, expect, it } from "vitest";
import { builtinConfigSchema } from "../../src/house.js";
import type { ChatMessage } from "../../src/models/message.js";
import { cutNote, fitExchange } from "../../src/session/exchange.js";
import { historyLimits } from "../../src/session/limits.js";
import { DEFAULT_HISTORY_LIMITS, SessionCache } from "../../src/session/session-cache.js";
import { jsonBytes, jsonPrefix } from "../../src/session/size.js";

const configSchema = builtinConfigSchema();

const exchange = (n: number, result = "r"): ChatMessage[] => [
  { role: "user", content: `q${n}` },
  { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] },
  { role: "tool", tool_call_id: `c${n}`, content: result },
  { role: "assistant", content: `a${n}` },
];

const bytesOf = (messages: readonly ChatMessage[]) => messages.reduce((sum, m) => sum + jsonBytes(m), 0);
const users = (messages: readonly ChatMessage[]) => messages.filter((m) => m.role === "user").map((m) => m.content);
const KiB = 1024;

describe("history of one session", () => {
  it("keeps at most max messages, dropping whole exchanges from the front", () => {
    const store = new SessionCache({ maxMessages: 10 });
    for (let n = 1; n <= 3; n++) store.append("s", exchange(n));
    const kept = store.get("s");
    expect(users(kept)).toEqual(["q2", "q3"]);
    expect(kept).toHaveLength(8);
    store.append("s", exchange(4));
    expect(store.get("s")[0]).toEqual({ role: "user", content: "q3" });
    expect(store.get("s")).toHaveLength(8);
  });

  it("keeps at most max bytes (UTF-8 bytes of the messages' JSON), dropping whole exchanges from the front", () => {
    const store = new SessionCache({ maxBytes: 20 * KiB });
    const big = "é".repeat(3 * KiB); // 6 KiB in UTF-8
    for (let n = 1; n <= 5; n++) store.append("s", exchange(n, big));
    const kept = store.get("s");
    expect(users(kept)).toEqual(["q3", "q4", "q5"]);
    expect(store.bytes).toBe(bytesOf(kept));
    expect(store.bytes).toBeLessThanOrEqual(20 * KiB);
    expect(store.bytes + bytesOf(exchange(2, big))).toBeGreaterThan(20 * KiB);
  });

  it("never starts with a tool result or a reply whose user message was dropped", () => {
    const store = new SessionCache({ maxMessages: 10 });
    store.append("s", exchange(1).slice(2));
    expect(store.get("s")).toEqual([]);
    expect(store.size).toBe(0);
    for (let n = 1; n <= 20; n++) {
      store.append("s", exchange(n, "x".repeat(n)));
      expect(store.get("s")[0]!.role).toBe("user");
    }
  });

  it("an exchange over max bytes on its own is kept alone, its longest texts cut to fit, each with a note", () => {
    const store = new SessionCache({ maxBytes: 16 * KiB });
    store.append("s", exchange(1));
    const huge = "x".repeat(100 * KiB);
    store.append("s", [
      { role: "user", content: `read it${"!".repeat(2 * KiB)}` },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "read", arguments: '{"path":"big"}' } }] },
      { role: "tool", tool_call_id: "c", content: huge },
      { role: "assistant", content: `summary ${huge}` },
    ]);
    const kept = store.get("s");
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(kept[0]!.content).toBe(`read it${"!".repeat(2 * KiB)}`);
    expect((kept[1] as { tool_calls: unknown[] }).tool_calls).toHaveLength(1);
    expect(kept[2]!.content).toMatch(
      /^x+\n\n\[cut: this message was 102400 bytes; a session's history keeps at most 16384 \(agents\.defaults\.max_history_bytes\)\]$/,
    );
    expect(kept[3]!.content).toMatch(/^summary x+\n\n\[cut: this message was 102408 bytes/);
    expect(store.bytes).toBe(bytesOf(kept));
    expect(store.bytes).toBeLessThanOrEqual(16 * KiB);
    expect(store.bytes).toBeGreaterThan(15 * KiB);
  });

  it("an exchange whose tool rounds alone are over the limits keeps its user message and final reply", () => {
    const rounds: ChatMessage[] = Array.from({ length: 300 }, (_, i): ChatMessage[] => [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `c${i}`, type: "function", function: { name: "t", arguments: JSON.stringify({ n: i, pad: "p".repeat(80) }) } }],
      },
      { role: "tool", tool_call_id: `c${i}`, content: "ok" },
    ]).flat();
    const long = [{ role: "user", content: "go" }, ...rounds, { role: "assistant", content: "all done" }] as ChatMessage[];
    expect(fitExchange(long, { maxMessages: 500, maxBytes: 16 * KiB })).toEqual([long[0], long.at(-1)]);
    expect(fitExchange(long, { maxMessages: 100, maxBytes: 1024 * KiB })).toEqual([long[0], long.at(-1)]);
    const store = new SessionCache({ maxMessages: 100 });
    store.append("s", exchange(1));
    store.append("s", long);
    expect(store.get("s")).toEqual([long[0], long.at(-1)]);
  });

  it("cuts by JSON bytes without splitting a character", () => {
    expect(jsonPrefix('ab"c', 3)).toBe("ab");
    expect(jsonPrefix("a😀b", 4)).toBe("a");
    expect(jsonPrefix("a😀b", 5)).toBe("a😀");
    expect(jsonPrefix("\u0001x", 6)).toBe("\u0001");
    expect(cutNote(10, 5)).toContain("agents.defaults.max_history_bytes");
    const message: ChatMessage = { role: "user", content: '€\n"😀'.repeat(5000) };
    const [fitted] = fitExchange([message], { maxMessages: 10, maxBytes: 16 * KiB });
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(16 * KiB);
    expect(jsonBytes(fitted)).toBeGreaterThan(15 * KiB);
    expect(() => JSON.parse(JSON.stringify(fitted))).not.toThrow();
  });

  it("hands out copies: changing them changes nothing", () => {
    const store = new SessionCache();
    const messages = exchange(1);
    store.append("s", messages);
    (messages[0] as { content: string }).content = "changed";
    store.get("s").pop();
    expect(store.get("s")).toHaveLength(4);
    expect(store.get("s")[0]).toEqual({ role: "user", content: "q1" });
  });

  it("a page is the last messages, newest last, with the total", async () => {
    const store = new SessionCache();
    for (let n = 1; n <= 3; n++) store.append("s", exchange(n));
    const page = await store.page("s", 5);
    expect(page.total).toBe(12);
    expect(page.messages).toEqual([...exchange(2).slice(3), ...exchange(3)]);
    expect(await store.page("none", 5)).toEqual({ messages: [], total: 0 });
  });
});

describe("sessions held in memory", () => {
  const hello = (n: number): ChatMessage[] => [
    { role: "user", content: `hello ${n}` },
    { role: "assistant", content: `hi ${n}` },
  ];

  it("an idle session is evicted once more than max sessions are held, least recently used first; a running one never is", async () => {
    const store = new SessionCache({ maxSessions: 3 });
    const release = await store.hold("running");
    store.append("running", hello(0));
    for (let n = 1; n <= 3; n++) store.append(`s${n}`, hello(n));
    expect(store.keys()).toEqual(["running", "s2", "s3"]);
    store.append("s2", hello(22));
    store.append("s4", hello(4));
    expect(store.keys()).toEqual(["running", "s2", "s4"]);
    for (let n = 5; n <= 10; n++) store.append(`s${n}`, hello(n));
    expect(store.keys()).toEqual(["running", "s9", "s10"]);
    expect(store.get("running")).toEqual(hello(0));
    expect(store.get("s1")).toEqual([]);
    release();
    release();
    store.append("s11", hello(11));
    expect(store.keys()).toEqual(["s9", "s10", "s11"]);
  });

  it("idle sessions are evicted once their bytes together are over max total bytes; held ones stay, over it, until released", async () => {
    const store = new SessionCache({ maxBytes: 30 * KiB, maxTotalBytes: 40 * KiB });
    const page = (n: number): ChatMessage[] => [{ role: "user", content: `${n}${"x".repeat(9 * KiB)}` }];
    for (let n = 0; n < 6; n++) store.append(`s${n}`, page(n));
    expect(store.keys()).toEqual(["s2", "s3", "s4", "s5"]);
    expect(store.bytes).toBeLessThanOrEqual(40 * KiB);
    const first = await store.hold("s2");
    const second = await store.hold("s3");
    for (const key of ["s2", "s2", "s3", "s3"]) store.append(key, page(9));
    expect(store.keys()).toEqual(["s2", "s3"]);
    expect(store.get("s3")).toHaveLength(3);
    expect(store.bytes).toBeGreaterThan(40 * KiB);
    first();
    expect(store.keys()).toEqual(["s3"]);
    expect(store.bytes).toBeLessThanOrEqual(40 * KiB);
    second();
    expect(store.keys()).toEqual(["s3"]);
  });

  it("holding a session marks it used; reading a page does not", async () => {
    const store = new SessionCache({ maxSessions: 2 });
    store.append("a", hello(1));
    store.append("b", hello(2));
    (await store.hold("a"))();
    await store.page("b", 10);
    store.append("c", hello(3));
    expect(store.keys()).toEqual(["a", "c"]);
  });

  it("clearing a session gives its bytes back", () => {
    const store = new SessionCache();
    store.append("a", hello(1));
    store.append("b", hello(2));
    store.clear("a");
    expect(store.bytes).toBe(bytesOf(hello(2)));
    expect(store.keys()).toEqual(["b"]);
  });

  it("the defaults are the config's (with store memory, whose default this store is)", () => {
    const config = configSchema.parse({ session: { store: "memory" } });
    expect(DEFAULT_HISTORY_LIMITS).toEqual(historyLimits(config));
  });
});
