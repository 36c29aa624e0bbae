/**
 * A turn's model calls share the JSON of the messages they have in common
 * (src/models/request-memo.ts): each call's text is exactly JSON.stringify's
 * of its wire messages, and only the messages the call before did not send
 * are serialized again.
 */
import { describe, expect, it } from "vitest";
import { bodyBytes } from "../../src/models/json-text.js";
import type { ChatMessage } from "../../src/models/message.js";
import { toWire } from "../../src/models/openai.js";
import { RequestMemo } from "../../src/models/request-memo.js";

/** The body as it goes on the wire, read back as text. */
const bodyText = (body: unknown) => bodyBytes(body).toString("utf8");

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
    expect(memo.messagesJson(owner, one, first.wire).text).toBe(JSON.stringify(one.map((m) => toWire(m))));
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

  it("a call whose messages are not the last call's and more (one changed, fewer) serializes them all again", () => {
    const memo = new RequestMemo();
    const owner = {};
    memo.messagesJson(owner, history, toWire);
    const changed = counted();
    const replaced = [...history.slice(0, 2), { role: "assistant", content: "other" } as ChatMessage, ...history.slice(3)];
    expect(memo.messagesJson(owner, replaced, changed.wire).text).toBe(JSON.stringify(replaced.map((m) => toWire(m))));
    expect(changed.seen).toEqual(replaced);

    const fewer = counted();
    const cut = replaced.slice(0, 2);
    expect(memo.messagesJson(owner, cut, fewer.wire).text).toBe(JSON.stringify(cut.map((m) => toWire(m))));
    expect(fewer.seen).toEqual(cut);
    const same = counted();
    expect(memo.messagesJson(owner, cut, same.wire).text).toBe(JSON.stringify(cut.map((m) => toWire(m))));
    expect(same.seen).toEqual([]);
    expect(memo.messagesJson(owner, [], toWire).text).toBe("[]");
    expect(memo.messagesJson(owner, cut, toWire).text).toBe(JSON.stringify(cut.map((m) => toWire(m))));
  });

  it("another provider's call (a fallback) makes its own text from every message", () => {
    const memo = new RequestMemo();
    memo.messagesJson({}, history, toWire);
    const other = counted();
    const vision = (message: ChatMessage) => other.wire(message);
    expect(memo.messagesJson({}, history, vision).text).toBe(JSON.stringify(history.map((m) => toWire(m))));
    expect(other.seen).toEqual(history);
  });
});
