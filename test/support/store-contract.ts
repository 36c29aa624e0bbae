import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import type { FeatureStateStore, StateLimits } from "../../src/session/feature-state.js";
import type { HistoryStore } from "../../src/session/history.js";
import type { SessionCacheOptions } from "../../src/session/session-cache.js";
import { type Harness, harness, jsonOf, tempDir } from "./project.js";

/**
 * The guarantees every durable session store keeps (README, "Sessions on
 * disk" and "Sessions in Postgres"), as one suite run against each store:
 * the JSONL store in test/unit/store-contract.test.ts, Postgres in
 * test/process/postgres-store.test.ts. A store is given as a place (a
 * folder, a database) and a way to open it there; opening it again after
 * closing it is a restart of the gateway.
 */

export interface OpenedStore {
  history: HistoryStore;
  state: FeatureStateStore;
  /** Closes both, and what they share (a folder's lock, a database's pool). */
  close(): Promise<void>;
}

/** Opens the store at its place, each call a new process's view of it. */
export type StoreOpener = (opts?: { history?: SessionCacheOptions; state?: StateLimits }) => OpenedStore;

const KEY = "agent:main:http:s1";
const turn = (n: number): ChatMessage[] => [
  { role: "user", content: `q${n}` },
  { role: "assistant", content: `a${n}` },
];
const toolTurn = (n: number): ChatMessage[] => [
  { role: "user", content: `q${n}` },
  { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] },
  { role: "tool", tool_call_id: `c${n}`, content: `r${n}` },
  { role: "assistant", content: `a${n}` },
];

/** A session read back as a turn reads it: held (loaded), then taken. */
async function reread(store: HistoryStore, key = KEY): Promise<ChatMessage[]> {
  const release = await store.hold(key);
  release();
  return store.get(key);
}

/** The HistoryStore and FeatureStateStore ports of a durable store. `place` gives a fresh place (an empty folder, an empty database) and its opener. */
export function durableStoreContract(name: string, place: () => Promise<StoreOpener>): void {
  describe(`${name}: the session store contract`, () => {
    it("a completed turn appended is read back by the next process, whole; a page is the tail, with the total", async () => {
      const open = await place();
      const first = open();
      await first.history.append(KEY, toolTurn(1));
      await first.history.append(KEY, turn(2));
      await first.close();
      const second = open();
      expect(await second.history.page(KEY, 2)).toEqual({ messages: turn(2), total: 6 });
      expect(second.history.keys()).toEqual([]);
      expect(await reread(second.history)).toEqual([...toolTurn(1), ...turn(2)]);
      await second.history.append(KEY, turn(3));
      expect(await second.history.page(KEY, 100)).toEqual({ messages: [...toolTurn(1), ...turn(2), ...turn(3)], total: 8 });
      await second.close();
    });

    it("clear is durable: after a restart the session is empty and no longer listed", async () => {
      const open = await place();
      const first = open();
      await first.history.append(KEY, turn(1));
      await first.history.append("agent:main:http:other", turn(1));
      await first.history.clear(KEY);
      expect(await first.history.get(KEY)).toEqual([]);
      await first.close();
      const second = open();
      expect(await reread(second.history)).toEqual([]);
      expect(await second.history.page(KEY, 10)).toEqual({ messages: [], total: 0 });
      expect((await second.history.list(10)).map((s) => s.key)).toEqual(["agent:main:http:other"]);
      // A cleared session begins again from nothing.
      await second.history.append(KEY, turn(5));
      expect(await second.history.page(KEY, 10)).toEqual({ messages: turn(5), total: 2 });
      await second.close();
    });

    it("a summary (replace) takes the place of the history, durably", async () => {
      const open = await place();
      const first = open();
      for (const n of [1, 2, 3]) await first.history.append(KEY, turn(n));
      const summary: ChatMessage[] = [{ role: "user", content: "[summary] q1 q2" }, ...turn(3)];
      await first.history.replace(KEY, summary);
      await first.history.append(KEY, turn(4));
      await first.close();
      const second = open();
      expect(await reread(second.history)).toEqual([...summary, ...turn(4)]);
      await second.close();
    });

    it("lists sessions with a history, the most recently changed first, at most limit, also after a restart", async () => {
      const open = await place();
      // A clock a second on at each change: the order does not hang on the file system's clock.
      let time = Date.parse("2026-12-01T10:00:00.000Z");
      const now = () => (time += 1000);
      const first = open({ history: { now } });
      await first.history.append("agent:main:http:a", turn(1));
      await first.history.append("agent:main:http:b", turn(1));
      await first.history.append("agent:main:http:a", turn(2));
      await first.history.append("agent:main:http:c", turn(1));
      await first.history.append("agent:main:http:one:subagent:x", turn(1));
      const listed = await first.history.list(10);
      expect(listed.map((s) => [s.key, s.messages])).toEqual([
        ["agent:main:http:c", 2],
        ["agent:main:http:a", 4],
        ["agent:main:http:b", 2],
      ]);
      expect(listed[0]!.updatedAt).toBeGreaterThanOrEqual(listed[1]!.updatedAt);
      await first.close();
      const second = open({ history: { now } });
      expect((await second.history.list(2)).map((s) => s.key)).toEqual(["agent:main:http:c", "agent:main:http:a"]);
      await second.close();
    });

    it("keeps what the session's limits keep, whole exchanges dropped from the front, and reads back the same", async () => {
      const open = await place();
      const first = open({ history: { maxMessages: 4 } });
      for (const n of [1, 2, 3, 4]) await first.history.append(KEY, turn(n));
      expect(await first.history.get(KEY)).toEqual([...turn(3), ...turn(4)]);
      await first.close();
      const second = open({ history: { maxMessages: 4 } });
      expect(await reread(second.history)).toEqual([...turn(3), ...turn(4)]);
      expect((await second.history.page(KEY, 100)).total).toBe(4);
      await second.close();
    });

    it("subagents' and one-message sessions are never stored: gone after a restart, never listed", async () => {
      const open = await place();
      const first = open();
      const child = `${KEY}:subagent:c1`;
      await first.history.append(child, turn(1));
      await first.history.append("agent:main:http:!once", turn(1));
      expect(await first.history.get(child)).toEqual(turn(1));
      expect(await first.history.list(10)).toEqual([]);
      await first.close();
      const second = open();
      expect(await reread(second.history, child)).toEqual([]);
      await second.close();
    });

    it("feature state: JSON entries per namespace with versions; expect is a compare-and-set; entries are frozen; kept across a restart", async () => {
      const open = await place();
      const opened = open();
      const store = opened.state;
      expect(await store.put("cron", "a", { at: 1 })).toBe(1);
      expect(await store.put("cron", "a", { at: 2 })).toBe(2);
      expect(await store.get("cron", "a")).toEqual({ key: "a", value: { at: 2 }, version: 2 });
      expect(await store.get("approvals", "a")).toBeUndefined();
      // Two takers of one due run: the one that read version 2 first wins, the other is told no.
      expect(await store.put("cron", "a", { at: 3 }, 2)).toBe(3);
      expect(await store.put("cron", "a", { at: 3 }, 2)).toBeUndefined();
      expect(await store.put("cron", "b", "new", 0)).toBe(1);
      expect(await store.put("cron", "b", "again", 0)).toBeUndefined();
      expect(await store.put("cron", "n", null)).toBe(1);
      expect((await store.list("cron")).map((e) => e.key)).toEqual(["a", "b", "n"]);
      const held = (await store.get("cron", "a"))!.value as { at: number };
      expect(() => {
        held.at = 99;
      }).toThrow(TypeError);
      expect(await store.delete("cron", "a", 1)).toBe(false);
      expect(await store.delete("cron", "a", 3)).toBe(true);
      expect(await store.delete("cron", "a")).toBe(false);
      await opened.close();
      const again = open();
      expect(await again.state.list("cron")).toEqual([
        { key: "b", value: "new", version: 1 },
        { key: "n", value: null, version: 1 },
      ]);
      await again.close();
    });

    it("feature state: past state_max_keys or state_max_bytes a change is refused with state_full and changes nothing", async () => {
      const open = await place();
      const opened = open({ state: { maxKeys: 3, maxBytes: 200 } });
      const store = opened.state;
      for (const key of ["a", "b", "c"]) await store.put("ns", key, 1);
      await expect(store.put("ns", "d", 1)).rejects.toMatchObject({ code: "state_full", message: expect.stringContaining("session.state_max_keys") });
      await expect(store.put("ns", "a", "x".repeat(300))).rejects.toMatchObject({
        code: "state_full",
        message: expect.stringContaining("session.state_max_bytes"),
      });
      expect((await store.list("ns")).map((e) => [e.key, e.value])).toEqual([
        ["a", 1],
        ["b", 1],
        ["c", 1],
      ]);
      await expect(store.put("ns", "a", () => 1)).rejects.toMatchObject({ code: "invalid_request" });
      // Another namespace has its own room.
      expect(await store.put("other", "d", 1)).toBe(1);
      await opened.close();
    });
  });
}

const history = async (h: Harness, key = KEY): Promise<ChatMessage[]> => (await jsonOf(await h.request(`/v1/sessions/${key}/history`))).messages;

/** The same guarantees through the gateway (hono's app over the runtime), for a store named by its `session` config. */
export function gatewayStoreContract(name: string, session: () => Promise<Record<string, unknown>>): void {
  describe(`${name}: sessions through the gateway`, () => {
    /** A gateway on one project and store; `restart` closes it and opens another on the same, as a restart of the process does. */
    async function gateway(extra: Record<string, unknown> = {}) {
      const dir = tempDir();
      const config = { session: await session(), ...extra };
      let h = harness({ dir, config });
      return {
        get h(): Harness {
          return h;
        },
        async restart(more: Record<string, unknown> = {}): Promise<Harness> {
          await h.runtime.close(0);
          h = harness({ dir, config: { ...config, ...more } });
          return h;
        },
      };
    }

    it("a completed turn is kept before its reply; a restart keeps it and the next turn carries on from it", async () => {
      const g = await gateway();
      expect((await g.h.chat({ message: "hello", session: "s1" })).status).toBe(200);
      expect((await history(g.h)).map((m) => m.content)).toEqual(["hello", expect.stringMatching(/^You said: hello/)]);
      const h = await g.restart();
      expect((await h.chat({ message: "again", session: "s1" })).status).toBe(200);
      expect((await history(h)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    });

    it("a turn that fails stores nothing: the history is as before it", async () => {
      const g = await gateway();
      await g.h.chat({ message: "kept", session: "s1" });
      // A model nobody can reach (fetch refuses port 1): the turn fails.
      const h = await g.restart({
        model_list: [{ model_name: "gone", provider: "openai", model: "x", api_base: "http://127.0.0.1:1/v1", api_key: "k" }],
        agents: { defaults: { model_name: "gone" } },
      });
      const failed = await h.chat({ message: "lost", session: "s1" });
      expect(failed.status).toBe(502);
      expect((await history(h)).map((m) => m.content)).toEqual(["kept", expect.stringMatching(/^You said: kept/)]);
    });

    it("/clear and DELETE /v1/sessions/<key> are durable: the session is empty after a restart, and unlisted", async () => {
      const g = await gateway();
      await g.h.chat({ message: "remember me", session: "s1" });
      await g.h.chat({ message: "me too", session: "s2" });
      expect((await g.h.chat({ message: "/clear", session: "s1" })).status).toBe(200);
      expect((await g.h.request("/v1/sessions/agent:main:http:s2", { method: "DELETE" })).status).toBe(200);
      const h = await g.restart();
      expect(await history(h)).toEqual([]);
      expect(await history(h, "agent:main:http:s2")).toEqual([]);
      expect((await jsonOf(await h.request("/v1/sessions"))).sessions).toEqual([]);
    });

    it("GET /v1/sessions lists the newest first, ?limit= the newest ones, also after a restart", async () => {
      const g = await gateway();
      await g.h.chat({ message: "one", session: "a" });
      await g.h.chat({ message: "one", session: "b" });
      await g.h.chat({ message: "two", session: "a" });
      const h = await g.restart();
      expect((await jsonOf(await h.request("/v1/sessions"))).sessions.map((s: { key: string; messages: number }) => [s.key, s.messages])).toEqual([
        ["agent:main:http:a", 4],
        ["agent:main:http:b", 2],
      ]);
      expect((await jsonOf(await h.request("/v1/sessions?limit=1"))).sessions.map((s: { key: string }) => s.key)).toEqual(["agent:main:http:a"]);
    });

    it("GET /ready answers 200 while the store answers", async () => {
      const g = await gateway();
      const res = await g.h.request("/ready");
      expect(res.status).toBe(200);
      expect(await jsonOf(res)).toEqual({ status: "ready" });
    });
  });
}
