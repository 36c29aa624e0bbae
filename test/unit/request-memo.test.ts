/**
 * A turn's model calls share the JSON of the messages they have in common
 * (src/models/request-memo.ts): each call's text is exactly JSON.stringify's
 * of its wire messages, and only the messages the call before did not send
 * are serialized again.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyBytes } from "../../src/models/json-text.js";
import { type ChatMessage, forModel } from "../../src/models/message.js";
import { toWire } from "../../src/models/openai.js";
import { RequestMemo, RequestMemos } from "../../src/models/request-memo.js";

/** The body as it goes on the wire, read back as text. */
const bodyText = (body: unknown) => bodyBytes(body).toString("utf8");

/**
 * A call's messages as the memo makes them, sent (the memo learns a call's
 * messages when its body is written): the text on the wire, which is also
 * what the JSON text says it is.
 */
function send<M>(memo: RequestMemo, owner: unknown, messages: readonly M[], wire: (message: M) => unknown): string {
  const json = memo.messagesJson(owner, messages, wire);
  const body = bodyText({ messages: json });
  const text = body.slice('{"messages":'.length, -1);
  expect(json.text).toBe(text);
  return text;
}

const history: ChatMessage[] = [
  { role: "system", content: "You are a test." },
  { role: "user", content: 'say "hi" é\u2028' },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "todo", arguments: '{"action":"read"}' } }] },
  { role: "tool", tool_call_id: "c1", content: "No plan yet." },
  { role: "assistant", content: "done" },
];

function counted() {
  const seen: ChatMessage[] = [];
  const wire = (message: ChatMessage) => {
    seen.push(message);
    return toWire(message);
  };
  return { seen, wire };
}

describe("a turn's calls share their messages' JSON", () => {
  it("each call's messages are JSON.stringify's text, and the second call serializes only what it adds", () => {
    const memo = new RequestMemo();
    const owner = {};
    const first = counted();
    const one = [...history, { role: "user", content: "next" } as ChatMessage];
    expect(send(memo, owner, one, first.wire)).toBe(JSON.stringify(one.map((m) => toWire(m))));
    expect(first.seen).toHaveLength(one.length);

    const second = counted();
    const added: ChatMessage[] = [
      { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "todo", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c2", content: "Plan: 1 step" },
    ];
    const two = [...one, ...added];
    const text = memo.messagesJson(owner, two, second.wire);
    expect(text.text).toBe(JSON.stringify(two.map((m) => toWire(m))));
    expect(second.seen).toEqual(added);
    // In a body, the text goes on the wire as it is, and JSON.stringify of the same body gives the same.
    expect(bodyText({ model: "m", messages: text })).toBe(JSON.stringify({ model: "m", messages: two.map((m) => toWire(m)) }));
    expect(JSON.stringify({ messages: text })).toBe(JSON.stringify({ messages: two.map((m) => toWire(m)) }));
  });

  it("a call that changes a message, or sends fewer, serializes only the messages the last call did not send", () => {
    const memo = new RequestMemo();
    const owner = {};
    send(memo, owner, history, toWire);
    const changed = counted();
    const other = { role: "assistant", content: "other" } as ChatMessage;
    const replaced = [...history.slice(0, 2), other, ...history.slice(3)];
    expect(send(memo, owner, replaced, changed.wire)).toBe(JSON.stringify(replaced.map((m) => toWire(m))));
    expect(changed.seen).toEqual([other]);

    const fewer = counted();
    const cut = replaced.slice(0, 2);
    expect(send(memo, owner, cut, fewer.wire)).toBe(JSON.stringify(cut.map((m) => toWire(m))));
    expect(fewer.seen).toEqual([]);
    const same = counted();
    expect(send(memo, owner, cut, same.wire)).toBe(JSON.stringify(cut.map((m) => toWire(m))));
    expect(same.seen).toEqual([]);
    expect(send(memo, owner, [], toWire)).toBe("[]");
    expect(send(memo, owner, cut, toWire)).toBe(JSON.stringify(cut.map((m) => toWire(m))));
  });

  it("the next turn, its history shifted by the exchange it dropped and its prompt and tool results' views made anew, serializes only the new messages", () => {
    const memo = new RequestMemo();
    const owner = {};
    const exchange = (n: number): ChatMessage[] => [
      { role: "user", content: `question ${n}` },
      { role: "assistant", content: `answer ${n} "quoted" \u00e9` },
    ];
    const stored = Array.from({ length: 20 }, (_, n) => exchange(n)).flat();
    const turn1 = [{ role: "system", content: "You help." } as ChatMessage, ...stored, { role: "user", content: "now" } as ChatMessage];
    send(memo, owner, turn1, toWire);
    // The store dropped the oldest exchange and added the last turn's messages (its own copies); the prompt is a new object.
    const next = counted();
    const prompt = { role: "system", content: "You help." } as ChatMessage;
    const kept = [...stored.slice(2), { role: "user", content: "now" } as ChatMessage, { role: "assistant", content: "done" } as ChatMessage];
    const turn2 = [prompt, ...kept, { role: "user", content: "and then?" } as ChatMessage];
    expect(send(memo, owner, turn2, next.wire)).toBe(JSON.stringify(turn2.map((m) => toWire(m))));
    // The prompt and the last turn's question are new objects with the very same fields: their text is kept too.
    expect(next.seen).toEqual(turn2.slice(-2));

    // A tool result's view for the model is a new object each turn (forModel leaves out what only people see).
    const result: ChatMessage = { role: "tool", tool_call_id: "c1", content: "Plan: 1 step", shown: "the plan" };
    const turn3 = [prompt, ...kept, result, { role: "user", content: "go" } as ChatMessage];
    send(memo, owner, forModel(turn3), toWire);
    const later = counted();
    const turn4 = forModel([prompt, ...kept, result, turn3.at(-1)!, { role: "assistant", content: "ok" } as ChatMessage]);
    expect(send(memo, owner, turn4, later.wire)).toBe(JSON.stringify(turn4.map((m) => toWire(m))));
    expect(later.seen).toEqual(turn4.slice(-1));
    // A field that differs, or one more, is another message.
    const other = counted();
    const changed = [...turn4.slice(0, -1), { role: "assistant", content: "ok", tool_calls: [] } as ChatMessage];
    expect(send(memo, owner, changed, other.wire)).toBe(JSON.stringify(changed.map((m) => toWire(m))));
    expect(other.seen).toEqual(changed.slice(-1));
  });

  it("a call of the same turn whose history was fitted shorter (the same prompt object) copies what it sends again", () => {
    const memo = new RequestMemo();
    const owner = {};
    const prompt = { role: "system", content: "You help." } as ChatMessage;
    const stored = Array.from({ length: 6 }, (_, n): ChatMessage[] => [
      { role: "user", content: `question ${n}` },
      { role: "assistant", content: `answer ${n}` },
    ]).flat();
    const now = { role: "user", content: "now" } as ChatMessage;
    send(memo, owner, [prompt, ...stored, now], toWire);
    const round: ChatMessage[] = [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "todo", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "No plan yet." },
    ];
    const fitted = [prompt, ...stored.slice(4), now, ...round];
    const next = counted();
    expect(send(memo, owner, fitted, next.wire)).toBe(JSON.stringify(fitted.map((m) => toWire(m))));
    expect(next.seen).toEqual(round);
  });

  it("a message with the same fields in another order is serialized again (a wire that spreads it writes them in its order)", () => {
    const memo = new RequestMemo();
    const owner = {};
    const spread = (message: ChatMessage) => ({ ...message });
    send(memo, owner, [{ role: "user", content: "hi" } as ChatMessage], spread);
    const reordered = [{ content: "hi", role: "user" } as ChatMessage];
    const seen: ChatMessage[] = [];
    const wire = (message: ChatMessage) => {
      seen.push(message);
      return spread(message);
    };
    expect(send(memo, owner, reordered, wire)).toBe('[{"content":"hi","role":"user"}]');
    expect(seen).toEqual(reordered);
  });

  it("whatever a call sends after whatever the last one sent, its text is exactly JSON.stringify's", () => {
    const pool: ChatMessage[] = [
      ...history,
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
      { role: "assistant", content: '\u2028 \ud83d\ude00 "' },
      { role: "tool", tool_call_id: "c9", content: "" },
    ];
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(pool.length - 1), { maxLength: 12 }), { minLength: 1, maxLength: 6 }), (calls) => {
        const memo = new RequestMemo();
        const owner = {};
        for (const call of calls) {
          const messages = call.map((at) => pool[at]!);
          expect(send(memo, owner, messages, toWire)).toBe(JSON.stringify(messages.map((m) => toWire(m))));
        }
      }),
    );
  });

  it("another provider's call (a fallback) makes its own text from every message", () => {
    const memo = new RequestMemo();
    send(memo, {}, history, toWire);
    const other = counted();
    const vision = (message: ChatMessage) => other.wire(message);
    expect(send(memo, {}, history, vision)).toBe(JSON.stringify(history.map((m) => toWire(m))));
    expect(other.seen).toEqual(history);
  });
});

describe("the memos kept between a session's turns (session.request_memo_bytes)", () => {
  /** A memo keeping a body of about `bytes` bytes. */
  function memoOf(bytes: number): RequestMemo {
    const memo = new RequestMemo();
    send(memo, {}, [{ role: "user", content: "x".repeat(bytes - 30) }] as ChatMessage[], toWire);
    return memo;
  }

  it("a session's next turn gets back the memo its last turn kept, and it is out of the store while that turn has it", () => {
    const memos = new RequestMemos(100_000, 1_000);
    const memo = memoOf(5_000);
    memos.keep("agent:main:http:a", memo);
    expect(memos.size).toBe(memo.size);
    expect(memos.take("agent:main:http:a")).toBe(memo);
    expect(memos.size).toBe(0);
    expect(memos.take("agent:main:http:a")).not.toBe(memo);
  });

  it("keeps at most its bound, the memos kept longest ago going first, and none too small to be worth it", () => {
    const memos = new RequestMemos(12_000, 1_000);
    const [a, b, c] = [memoOf(5_000), memoOf(5_000), memoOf(5_000)];
    memos.keep("a", a);
    memos.keep("b", b);
    memos.keep("c", c);
    expect(memos.size).toBeLessThanOrEqual(12_000);
    expect(memos.take("a")).not.toBe(a);
    expect(memos.take("b")).toBe(b);
    memos.keep("small", memoOf(500));
    expect(memos.size).toBe(c.size);
    memos.keep("huge", memoOf(20_000));
    expect(memos.size).toBe(c.size);
    memos.forget("c");
    expect(memos.size).toBe(0);
    expect(memos.take("c")).not.toBe(c);
  });
});
