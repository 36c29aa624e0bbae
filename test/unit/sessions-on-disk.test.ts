import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ChatMessage } from "../../src/models/message.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { type Harness, type HarnessOptions, harness, jsonOf, tempDir } from "../support/project.js";

/** Sessions kept in the session folder through the gateway (README, "Sessions on disk"), and the session routes. */

const KEY = "agent:main:http:s1";

/** A gateway on `dir`; `restart` closes it and opens another on the same folder, as a restart of the process does. */
function gatewayOn(dir: string, opts: HarnessOptions = {}) {
  let h = harness({ ...opts, dir });
  return {
    get h(): Harness {
      return h;
    },
    async restart(): Promise<Harness> {
      await h.runtime.close(0);
      h = harness({ ...opts, dir });
      return h;
    },
  };
}

const history = async (h: Harness, key = KEY): Promise<ChatMessage[]> => (await jsonOf(await h.request(`/v1/sessions/${key}/history`))).messages;
const fileLines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ChatMessage);

describe("sessions on disk, through the gateway", () => {
  it("a restart keeps every session's history, and the next turn carries on from it", async () => {
    const g = gatewayOn(tempDir());
    expect((await g.h.chat({ message: "hello", session: "s1" })).status).toBe(200);
    expect((await g.h.chat({ message: "again", session: "s1" })).status).toBe(200);
    const before = await history(g.h);
    expect(before.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const h = await g.restart();
    expect(await history(h)).toEqual(before);
    expect((await h.chat({ message: "after", session: "s1" })).status).toBe(200);
    expect((await history(h)).map((m) => m.content)).toEqual([...before.map((m) => m.content), "after", expect.stringMatching(/^You said: after/)]);
    // While it runs, the gateway's journal is there too (a clean stop removes it).
    expect(readdirSync(path.join(h.dir, "sessions")).sort()).toEqual([
      "agent_main_http_s1.jsonl",
      "agent_main_http_s1.meta.json",
      "picoclaw.journal.0",
      "picoclaw.lock",
    ]);
  });

  it("/clear and /new survive a restart: the session is empty after it", async () => {
    const g = gatewayOn(tempDir());
    for (const command of ["/clear", "/new"]) {
      await g.h.chat({ message: "remember me", session: "s1" });
      expect((await g.h.chat({ message: command, session: "s1" })).status).toBe(200);
      const h = await g.restart();
      expect(await history(h)).toEqual([]);
    }
  });

  it("DELETE /v1/sessions/<key> does what /clear does, durably: 200 {cleared: true}", async () => {
    const g = gatewayOn(tempDir(), { config: { gateway: { token: "tok" } } });
    const auth = { authorization: "Bearer tok" };
    await g.h.chat({ message: "hello", session: "s1" }, auth);
    expect((await g.h.request(`/v1/sessions/${KEY}`, { method: "DELETE" })).status).toBe(401);
    const res = await g.h.request(`/v1/sessions/${KEY}`, { method: "DELETE", headers: auth });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ cleared: true });
    const h = await g.restart();
    expect(await jsonOf(await h.request(`/v1/sessions/${KEY}/history`, { headers: auth }))).toEqual({ messages: [], total: 0 });
    expect((await h.request("/v1/sessions/not-a-key", { method: "DELETE", headers: auth })).status).toBe(400);
    const unknown = await h.request("/v1/sessions/agent:nobody:http:x", { method: "DELETE", headers: auth });
    expect(unknown.status).toBe(404);
    expect((await jsonOf(unknown)).error.code).toBe("agent_not_found");
  });

  it("GET /v1/sessions lists sessions, the most recently changed first, also after a restart; ?limit= takes the newest", async () => {
    const g = gatewayOn(tempDir(), { agents: { main: "---\nname: Main\n---\nHi.", other: "---\nname: Other\n---\nHi." } });
    await g.h.chat({ message: "one", session: "a" });
    await g.h.chat({ message: "one", session: "b", agent: "other" });
    await g.h.chat({ message: "two", session: "a" });
    const listed = await jsonOf(await g.h.request("/v1/sessions"));
    expect(listed.sessions).toEqual([
      { key: "agent:main:http:a", agent: "main", messages: 4, updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
      { key: "agent:other:http:b", agent: "other", messages: 2, updated_at: expect.any(String) },
    ]);
    expect(Date.parse(listed.sessions[0].updated_at)).toBeGreaterThanOrEqual(Date.parse(listed.sessions[1].updated_at));
    const h = await g.restart();
    expect((await jsonOf(await h.request("/v1/sessions"))).sessions.map((s: { key: string; messages: number }) => [s.key, s.messages])).toEqual([
      ["agent:main:http:a", 4],
      ["agent:other:http:b", 2],
    ]);
    expect((await jsonOf(await h.request("/v1/sessions?limit=1"))).sessions.map((s: { key: string }) => s.key)).toEqual(["agent:main:http:a"]);
    for (const bad of ["0", "1001", "x", "-1"]) {
      const res = await h.request(`/v1/sessions?limit=${bad}`);
      expect(res.status).toBe(400);
      expect((await jsonOf(res)).error.message).toContain("limit: expected an integer from 1 to 1000");
    }
  });

  it("an evicted session is read back from its file when it is used again", async () => {
    const g = gatewayOn(tempDir(), { config: { session: { max_sessions: 1 } } });
    await g.h.chat({ message: "first", session: "a" });
    await g.h.chat({ message: "other", session: "b" });
    expect(g.h.runtime.sessionKeys()).toEqual(["agent:main:http:b"]);
    expect((await history(g.h, "agent:main:http:a")).map((m) => m.content)).toEqual(["first", expect.stringMatching(/^You said: first/)]);
    await g.h.chat({ message: "second", session: "a" });
    expect((await history(g.h, "agent:main:http:a")).filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first", "second"]);
  });

  it("with session.store memory nothing is written, and the list shows the sessions in memory", async () => {
    const h = harness({ config: { session: { store: "memory" } } });
    await h.chat({ message: "hello", session: "s1" });
    expect(existsSync(path.join(h.dir, "sessions"))).toBe(false);
    expect((await jsonOf(await h.request("/v1/sessions"))).sessions).toEqual([{ key: KEY, agent: "main", messages: 2, updated_at: expect.any(String) }]);
  });

  it("session.dir is relative to the config file's folder", async () => {
    const h = harness({ config: { session: { dir: "data/chats" } } });
    await h.chat({ message: "hello", session: "s1" });
    expect(fileLines(path.join(h.dir, "data", "chats", "agent_main_http_s1.jsonl")).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a 1 MB tool result is cut before it enters the history, in memory and in the session file", async () => {
    const big = defineTool({
      name: "big",
      description: "Answers a lot.",
      parameters: z.object({}),
      enabledByDefault: true,
      execute: () => toolResult.silent("z".repeat(1024 * 1024)),
    });
    const h = harness({ tools: [big] });
    expect((await h.chat({ message: "CALL big {}", session: "s1" })).status).toBe(200);
    const kept = `${"z".repeat(64 * 1024)}\n[... cut: the result was 1 MiB; the first 64 KiB are kept]`;
    expect((await history(h)).find((m) => m.role === "tool")?.content).toBe(kept);
    expect(fileLines(path.join(h.dir, "sessions", "agent_main_http_s1.jsonl")).find((m) => m.role === "tool")?.content).toBe(kept);
  });

  it("a conversation the client keeps (POST /v1/chat/completions) is never written to the session folder, not even while it runs, nor listed", async () => {
    const seen: string[][] = [];
    const peek = defineTool({
      name: "peek",
      description: "Looks at the session folder.",
      parameters: z.object({}),
      enabledByDefault: true,
      execute: () => {
        seen.push(readdirSync(path.join(h.dir, "sessions")).filter((f) => f.endsWith(".jsonl")));
        return toolResult.silent("looked");
      },
    });
    const h = harness({ tools: [peek] });
    await h.chat({ message: "hello", session: "s1" });
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "main",
        messages: [
          { role: "user", content: "earlier" },
          { role: "assistant", content: "yes" },
          { role: "user", content: "CALL peek {}" },
        ],
      }),
    });
    expect(res.status).toBe(200);
    expect(seen).toEqual([["agent_main_http_s1.jsonl"]]);
    expect(readdirSync(path.join(h.dir, "sessions")).filter((f) => f.endsWith(".jsonl"))).toEqual(["agent_main_http_s1.jsonl"]);
    expect((await jsonOf(await h.request("/v1/sessions"))).sessions.map((s: { key: string }) => s.key)).toEqual([KEY]);
    expect(h.runtime.sessionKeys()).toEqual([KEY]);
  });

  it("subagents' sessions are never written; a kept child history goes with /clear; todo plans are not restored", async () => {
    const g = gatewayOn(tempDir(), { config: { tools: { subagent: { keep_history: true }, todo: { enabled: true } } } });
    await g.h.chat({ message: 'CALL subagent {"task":"hello from the parent"}', session: "s1" });
    await g.h.chat({ message: 'CALL todo {"action":"write","todos":[{"id":"1","content":"Plan"}]}', session: "s1" });
    const child = g.h.runtime.sessionKeys().find((key) => key.includes(":subagent:"))!;
    expect((await history(g.h, child)).length).toBeGreaterThan(0);
    expect(readdirSync(path.join(g.h.dir, "sessions")).filter((f) => f.endsWith(".jsonl"))).toEqual(["agent_main_http_s1.jsonl"]);
    expect((await jsonOf(await g.h.request(`/v1/sessions/${KEY}/todos`))).total_count).toBe(1);
    const h = await g.restart();
    expect((await history(h)).length).toBe(8);
    expect((await jsonOf(await h.request(`/v1/sessions/${KEY}/todos`))).total_count).toBe(0);
    await h.chat({ message: 'CALL subagent {"task":"again"}', session: "s1" });
    expect(h.runtime.sessionKeys().some((key) => key.includes(":subagent:"))).toBe(true);
    await h.chat({ message: "/clear", session: "s1" });
    expect(h.runtime.sessionKeys()).toEqual([]);
    expect(readdirSync(path.join(h.dir, "sessions")).sort()).toEqual(["picoclaw.journal.0", "picoclaw.lock"]);
  });
});
