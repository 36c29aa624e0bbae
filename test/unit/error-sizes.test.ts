/**
 * Bad input gets a short answer, however bad it is: a body of thousands of
 * bad parts lists the first few problems and counts the rest; names from
 * the request are quoted cut short; bytes that are not UTF-8 are refused,
 * not silently replaced.
 */
import { describe, expect, it } from "vitest";
import { MAX_LISTED_PROBLEMS } from "../../src/validation.js";
import { harness, jsonOf } from "../support/project.js";

const post = (body: string | Uint8Array, path = "/v1/chat") => ({ method: "POST", headers: { "content-type": "application/json" }, body, path });

describe("error answers stay small", () => {
  it("a 900 KB body of bad content parts is a short 400 listing the first problems and counting the rest", async () => {
    const h = harness();
    const parts = Array.from({ length: 30_000 }, () => ({ type: "video", video: "x" }));
    const body = JSON.stringify({ model: "main", messages: [{ role: "user", content: parts }] });
    expect(body.length).toBeGreaterThan(800_000);
    const res = await h.request("/v1/chat/completions", post(body));
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(4_000);
    expect(text).toMatch(/and \d+ more problems/);
    const chat = await h.request("/v1/chat", post(JSON.stringify({ message: "hi", images: Array.from({ length: 5_000 }, () => ({ url: 7 })) })));
    expect(chat.status).toBe(400);
    const chatError = (await jsonOf(chat)).error.message as string;
    expect(chatError.length).toBeLessThan(4_000);
    expect(chatError.split("; ").length).toBe(MAX_LISTED_PROBLEMS + 1);
  });

  it("a route that quotes a whole value (a 500 KB time zone for cron, a 5,000-character id in a path) answers at most 1,000 characters of message", async () => {
    const h = harness();
    const cron = await h.request(
      "/v1/cron",
      post(JSON.stringify({ message: "x", session_key: "agent:main:http:s", cron_expr: "* * * * *", tz: "Z".repeat(500_000) }), "/v1/cron"),
    );
    expect(cron.status).toBeGreaterThanOrEqual(400);
    expect(cron.status).toBeLessThan(500);
    const cronText = await cron.text();
    expect(cronText.length).toBeLessThan(1_200);
    expect((JSON.parse(cronText).error.message as string).endsWith("more characters)")).toBe(true);
    const id = "i".repeat(5_000);
    for (const [method, path] of [
      ["DELETE", `/v1/cron/${id}`],
      ["POST", `/v1/pairing/${id}/approve`],
      ["DELETE", `/v1/pairing/users/${id}/${id}`],
    ] as const) {
      const res = await h.request(path, { method });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect((await res.text()).length).toBeLessThan(1_200);
    }
  });

  it("a value no choice of a union takes says what each choice found wrong (not zod's bare 'Invalid input'); a bad session header is quoted cut to 80 characters", async () => {
    const h = harness();
    const body = (extra: Record<string, unknown>) => JSON.stringify({ model: "main", messages: [{ role: "user", content: "hi" }], ...extra });
    const stop = await jsonOf(await h.request("/v1/chat/completions", post(body({ stop: ["a", "b", "c", "d", "e"] }))));
    expect(stop.error.message).toBe("stop: expected string, received array (or: must have at most 4 items)");
    const session = await h.request("/v1/chat/completions", {
      ...post(body({})),
      headers: { "content-type": "application/json", "x-session-id": "!".repeat(500) },
    });
    expect(session.status).toBe(400);
    expect((await jsonOf(session)).error.message).toBe(`X-Session-Id: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got "${"!".repeat(80)}…")`);
  });

  it("a 100 KB agent or model name is quoted cut short, never echoed whole", async () => {
    const h = harness();
    const name = "a".repeat(100_000);
    const chat = await jsonOf(await h.request("/v1/chat", post(JSON.stringify({ message: "hi", agent: name }))));
    expect(chat.error.code).toBe("agent_not_found");
    expect(chat.error.message).toBe(`unknown agent "${"a".repeat(80)}…"`);
    const openai = await h.request("/v1/chat/completions", post(JSON.stringify({ model: name, messages: [{ role: "user", content: "hi" }] })));
    expect(openai.status).toBe(404);
    expect((await openai.text()).length).toBeLessThan(1_000);
    // An unknown key with a huge name, too.
    const key = await jsonOf(await h.request("/v1/chat", post(JSON.stringify({ message: "hi", [name]: 1 }))));
    expect(key.error.message.length).toBeLessThan(300);
  });

  it("a body that is not UTF-8 is 400 invalid_json, and nothing runs", async () => {
    const h = harness();
    const bytes = new Uint8Array([...new TextEncoder().encode('{"message":"hi '), 0xc3, 0x28, ...new TextEncoder().encode('"}')]);
    const res = await h.request("/v1/chat", post(bytes));
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toEqual({ error: { code: "invalid_json", message: "the body is not valid UTF-8" } });
    expect(await h.runtime.historyOf("agent:main:http:default")).toEqual([]);
  });

  it("a lone surrogate escape (half of a UTF-16 pair) in any string or key is 400 invalid_json naming where, and nothing runs; a whole pair passes", async () => {
    const h = harness();
    const lone = await h.request("/v1/chat", post('{"message":"hi \\ud800 there"}'));
    expect(lone.status).toBe(400);
    expect((await jsonOf(lone)).error).toEqual({
      code: "invalid_json",
      message: "the body is not valid Unicode: message has half of a UTF-16 surrogate pair (a lone \\uD800-\\uDFFF escape)",
    });
    const nested = await h.request("/v1/chat/completions", post('{"model":"main","messages":[{"role":"user","content":[{"type":"text","text":"\\uDE00x"}]}]}'));
    expect(nested.status).toBe(400);
    expect((await jsonOf(nested)).error.message).toContain("messages[0].content[0].text has half of a UTF-16 surrogate pair");
    const key = await jsonOf(await h.request("/v1/chat", post('{"message":"hi","\\udbff":1}')));
    expect(key.error.message).toContain("a key of the body");
    expect(await h.runtime.historyOf("agent:main:http:default")).toEqual([]);
    // A body nested as deep as its bytes allow, with such an escape at the bottom, is answered (no stack overflow).
    const deep = await h.request("/v1/chat", post(`{"message":"hi","x":${"[".repeat(200_000)}"\\ud800"${"]".repeat(200_000)}}`));
    expect(deep.status).toBe(400);
    expect((await jsonOf(deep)).error.message).toMatch(/^the body is not valid Unicode: x(\[0\])+/);
    const pair = await h.request("/v1/chat", post('{"message":"ok \\ud83d\\ude00"}'));
    expect(pair.status).toBe(200);
    expect((await jsonOf(pair)).reply).toContain("ok \u{1F600}");
  });
});
