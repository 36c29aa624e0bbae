import { describe, expect, it } from "vitest";
import { HISTORY_PAGE } from "../../src/gateway/history-route.js";
import { harness, jsonOf } from "../support/project.js";
import { testTools } from "../support/tools.js";

const KEY = "agent:main:http:s";
const history = (h: ReturnType<typeof harness>, query = "") => h.request(`/v1/sessions/${KEY}/history${query}`);

describe("GET /v1/sessions/<key>/history", () => {
  it("?limit=N answers the last N messages, newest last, and the total; 200 by default, at most 1000", async () => {
    const h = harness({ config: { agents: { defaults: { max_history_messages: 2000 } } } });
    for (let n = 1; n <= 600; n++) await h.chat({ message: `m${n}`, session: "s" });
    const last3 = await jsonOf(await history(h, "?limit=3"));
    expect(last3.total).toBe(1200);
    expect(last3.messages.map((m: { role: string }) => m.role)).toEqual(["assistant", "user", "assistant"]);
    expect(last3.messages[1]).toEqual({ role: "user", content: "m600" });
    const byDefault = await jsonOf(await history(h));
    expect(byDefault.messages).toHaveLength(HISTORY_PAGE.default);
    expect(byDefault.messages.at(-2)).toEqual({ role: "user", content: "m600" });
    expect(byDefault.messages[0]).toEqual({ role: "user", content: "m501" });
    expect((await jsonOf(await history(h, `?limit=${HISTORY_PAGE.max}`))).messages).toHaveLength(1000);
    expect((await jsonOf(await history(h, "?limit=5000"))).error.code).toBe("invalid_request");
  });

  it("a tool result the user saw keeps what they were shown (shown), so a reloaded page shows it again; a silent one keeps none", async () => {
    const h = harness({ tools: testTools });
    await h.chat({ message: 'CALL echo {"text":"hi"}\nCALL whisper {"text":"psst"}', session: "s" });
    const { messages } = await jsonOf(await history(h));
    const results = messages.filter((m: { role: string }) => m.role === "tool");
    expect(results).toEqual([
      { role: "tool", tool_call_id: expect.any(String), content: "echo: hi", shown: "echo: hi" },
      { role: "tool", tool_call_id: expect.any(String), content: "secret: psst" },
    ]);
  });

  it("a bad limit is 400 invalid_request naming the parameter", async () => {
    const h = harness();
    for (const bad of ["0", "1001", "-1", "1.5", "abc", "", "1e3", " 5"]) {
      const res = await history(h, `?limit=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(await jsonOf(res)).toEqual({
        error: { code: "invalid_request", message: `limit: expected an integer from 1 to 1000 (got ${JSON.stringify(bad)})` },
      });
    }
    expect((await history(h, "?limit=1")).status).toBe(200);
  });

  it("whatever was sent, one answer is at most the session's max_history_bytes (and a little JSON)", async () => {
    const h = harness({ config: { agents: { defaults: { max_history_bytes: 64 * 1024 } } } });
    for (let n = 0; n < 10; n++) await h.chat({ message: `${n} ${"y".repeat(200_000)}`, session: "s" });
    const res = await history(h, "?limit=1000");
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(64 * 1024 + 100);
    const { messages } = JSON.parse(text);
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[0].content).toMatch(/^9 y+\n\n\[cut: this message was 200002 bytes/);
  });
});
