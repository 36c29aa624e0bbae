/**
 * A conversation's turns start from the JSON of its last model request
 * (session.request_memo_bytes): what goes on the wire is byte for byte what
 * the same turns send with the memos off, across the exchanges the history
 * drops, tool results, /clear and a subagent's session, and a later turn
 * does take its session's memo back.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type RequestMemo, RequestMemos } from "../../src/models/request-memo.js";
import { completionChunk, sseChunks } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, harness } from "../support/project.js";
import { wireConfig } from "../support/wire-model.js";

/** An OpenAI-compatible model in-process: calls `todo` when the last message is the user's, answers "done" after a tool result; keeps each request body's text. */
function scriptedModel() {
  const bodies: string[] = [];
  let calls = 0;
  const fetch: typeof globalThis.fetch = async (_url, init) => {
    const raw = init?.body;
    const text = typeof raw === "string" ? raw : new TextDecoder().decode(raw as Uint8Array);
    bodies.push(text);
    const last = JSON.parse(text).messages.at(-1);
    const delta =
      last.role === "tool"
        ? { role: "assistant", content: "done" }
        : {
            role: "assistant",
            tool_calls: [{ index: 0, id: `call_${++calls}`, type: "function", function: { name: "todo", arguments: '{"action":"read"}' } }],
          };
    const finish = last.role === "tool" ? "stop" : "tool_calls";
    return new Response(sseChunks([completionChunk(delta), completionChunk({}, { finish })]).join(""), {
      status: 200,
      headers: { "content-type": "text/event-stream" },
    });
  };
  return { bodies, fetch };
}

/** Each message long enough that a session's request passes the memos' least worth keeping (8 KiB). */
const say = (n: number) => `message ${n}: ${"words ".repeat(1_600)}`;

async function conversation(memoBytes: number | undefined) {
  const model = scriptedModel();
  const session = memoBytes === undefined ? {} : { request_memo_bytes: memoBytes };
  const h = harness({
    config: wireConfig({
      agents: { defaults: { model_name: "wire", max_history_messages: 10 } },
      tools: { ...DEFAULT_TOOLS_OFF, todo: { enabled: true } },
      session,
    }),
    models: { fetch: model.fetch },
  });
  const replies: string[] = [];
  const send = async (message: string, key = "s") => replies.push((await h.chat({ message, session: key })).json.reply);
  for (let n = 1; n <= 6; n++) await send(say(n));
  await send("/clear");
  for (let n = 7; n <= 9; n++) await send(say(n));
  await send(say(10), "other");
  return { bodies: model.bodies, replies };
}

describe("a conversation's next turn starts from its last request's JSON", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sends byte for byte what the same turns send with the memos off, and takes the session's memo back", async () => {
    const take = RequestMemos.prototype.take;
    const taken: { key: string; size: number }[] = [];
    vi.spyOn(RequestMemos.prototype, "take").mockImplementation(function (this: RequestMemos, key: string): RequestMemo {
      const memo = take.call(this, key);
      taken.push({ key, size: memo.size });
      return memo;
    });
    const on = await conversation(undefined);
    const turnsOn = taken.splice(0);
    const off = await conversation(0);

    expect(off.bodies).toHaveLength(20);
    expect(on.bodies).toEqual(off.bodies);
    expect(on.replies).toEqual(off.replies);
    // The history dropped exchanges (10 messages kept): the requests did not only grow.
    const counts = on.bodies.map((body) => JSON.parse(body).messages.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1 + 10 + 3);

    // Off: no memo is kept or taken. On: every turn of "s" but the first and the first after /clear took back its last turn's JSON.
    expect(taken).toEqual([]);
    const sizes = turnsOn.map(({ key, size }) => [key.split(":").at(-1), size > 0]);
    expect(sizes).toEqual([
      ["s", false],
      ["s", true],
      ["s", true],
      ["s", true],
      ["s", true],
      ["s", true],
      ["s", false],
      ["s", true],
      ["s", true],
      ["other", false],
    ]);
  });
});
