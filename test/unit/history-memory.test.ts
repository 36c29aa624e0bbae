import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { SessionCache } from "../../src/session/session-cache.js";
import { JsonlHistoryStore } from "../../src/session/jsonl/jsonl-store.js";
import { harness, tempDir } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";

/**
 * What the history really keeps in memory, measured on the heap (after a
 * full garbage collection) rather than assumed: copies, cut texts and the
 * strings they came from. Each case stores many messages at once so that
 * what else the process allocates meanwhile is noise.
 */

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Live heap bytes: full collections, with turns of the event loop between them for finalizers to run. */
async function heapUsed(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes still used after `work`, per `count`, once what `work` keeps is the only thing kept. */
async function retainedPer(count: number, work: () => void): Promise<number> {
  const before = await heapUsed();
  work();
  return ((await heapUsed()) - before) / count;
}

const MB = 1_000_000;
const SESSIONS = 20;

/** A 1 MB message as the gateway gets it: parsed out of a JSON request body. */
const parsedMessage = (n: number, text = "x".repeat(MB - 8)): string =>
  (JSON.parse(JSON.stringify({ message: `${n}`.padEnd(8) + text })) as { message: string }).message;

describe("what the history keeps in memory", () => {
  it("a 1 MB message costs about 1 MB in the store, not a second copy for its measure", async () => {
    const store = new SessionCache();
    const perItem = await retainedPer(SESSIONS, () => {
      for (let n = 0; n < SESSIONS; n++) store.append(`s${n}`, [{ role: "user", content: parsedMessage(n) }]);
    });
    expect(store.size).toBe(SESSIONS);
    expect(perItem).toBeGreaterThan(0.95 * MB);
    expect(perItem).toBeLessThan(1.1 * MB);
  });

  it("a message cut to fit keeps only what was kept of it, not the text it was cut from", async () => {
    const store = new SessionCache({ maxBytes: 64 * 1024 });
    const perItem = await retainedPer(SESSIONS, () => {
      for (let n = 0; n < SESSIONS; n++) store.append(`s${n}`, [{ role: "user", content: parsedMessage(n) }]);
    });
    expect(store.bytes).toBeLessThanOrEqual(SESSIONS * 64 * 1024);
    expect(perItem).toBeLessThan(100 * 1024);
  });

  it("a short text taken out of a large one does not keep the large one alive", async () => {
    const store = new SessionCache();
    const perItem = await retainedPer(SESSIONS, () => {
      for (let n = 0; n < SESSIONS; n++) {
        const large = parsedMessage(n);
        store.append(`s${n}`, [{ role: "user", content: large.slice(0, 100) }]);
      }
    });
    expect(perItem).toBeLessThan(10 * 1024);
  });

  it("an idle session of one short exchange keeps its texts and little more: no spare room, no copies of role names", async () => {
    const store = new SessionCache();
    const count = 5000;
    // As requests bring them: every message parsed out of its own JSON body.
    const exchange = (n: number) =>
      JSON.parse(`[{"role":"user","content":"hello ${n}"},{"role":"assistant","content":"You said: hello ${n}"}]`) as ChatMessage[];
    const perSession = await retainedPer(count, () => {
      for (let n = 0; n < count; n++) store.append(`agent:main:http:idle${n}`, exchange(n));
    });
    expect(store.size).toBe(count);
    // About 400 bytes: its key, the session and its array, two messages and their texts, its entry in the map.
    expect(perSession).toBeLessThan(450);
  });

  it("with sessions on disk, an idle session costs about 700 bytes besides its texts: memory's copy, its entry in the index of files and in the list of the newest", async () => {
    const count = 1000;
    const exchange = (n: number) =>
      JSON.parse(`[{"role":"user","content":"hello ${n}"},{"role":"assistant","content":"You said: hello ${n}"}]`) as ChatMessage[];
    /** Heap bytes per session of `count` idle sessions added to a store (of its own) after `count` others. */
    const measure = async () => {
      const store = JsonlHistoryStore.open({ dir: tempDir(), timer: new ManualTimers().timer });
      // As a turn does: the session held, its exchange appended, then let go; the key made anew each time.
      const turn = async (n: number) => {
        const key = ["agent", "main", "http", `idle${n}`].join(":");
        const release = await store.hold(key);
        await store.append(key, exchange(n));
        release();
      };
      // Warm-up: the code a turn runs is compiled and optimised before the measure.
      for (let n = count; n < 2 * count; n++) await turn(n);
      const before = await heapUsed();
      for (let n = 0; n < count; n++) await turn(n);
      // Closed: nothing under way any more (meta files written, files closed); what it holds stays.
      await store.close();
      const perSession = ((await heapUsed()) - before) / count;
      expect(store.size).toBe(2 * count);
      return perSession;
    };
    // About 700 bytes: what memory keeps (above), the session's entry in the index (its times, counts and file size), its
    // places in the maps, one string for its key in both, and its entry in the list of the newest sessions (kept for
    // the 1,000 newest only, as these are; before the list, 600; before one key string, 900 to 1,100). Measured twice,
    // each time in a store of its own, and the smaller kept: one measure in a few comes out 100-200 bytes a session
    // higher (old-space objects V8 happens to keep at that moment; 550-790 in six runs, 813 once in CI), which is not
    // what a session holds.
    expect(Math.min(await measure(), await measure())).toBeLessThan(800);
  });

  it("text beyond Latin-1 costs two bytes a character: up to twice its UTF-8 bytes in memory", async () => {
    const store = new SessionCache();
    const perItem = await retainedPer(SESSIONS, () => {
      for (let n = 0; n < SESSIONS; n++) store.append(`s${n}`, [{ role: "user", content: parsedMessage(n, `${"x".repeat(MB - 11)}€`) }]);
    });
    expect(store.bytes / SESSIONS).toBeLessThan(1.01 * MB);
    expect(perItem).toBeGreaterThan(1.9 * MB);
    expect(perItem).toBeLessThan(2.1 * MB);
  });

  it("through the gateway, a 1 MB message and its 1 MB echo cost about 2 MB, and the bounds hold", async () => {
    const h = harness({ config: { agents: { defaults: { max_history_bytes: 3 * 1024 * 1024 } }, session: { max_bytes: 16 * 1024 * 1024 } } });
    const send = async (n: number, session = `s${n % 10}`) => {
      const body = JSON.stringify({ message: `${n}`.padEnd(8) + "x".repeat(MB - 8), session });
      const res = await h.request("/v1/chat", { method: "POST", headers: { "content-type": "application/json" }, body });
      await res.arrayBuffer();
      return res.status;
    };
    // The first request of its kind loads code and fills caches, once; measure after it.
    expect(await send(0, "warm")).toBe(200);
    await h.runtime.clearSession("agent:main:http:warm");
    const before = await heapUsed();
    for (let n = 0; n < 5; n++) expect(await send(n)).toBe(200);
    const perMessage = ((await heapUsed()) - before) / 5;
    expect(perMessage).toBeGreaterThan(1.9 * MB);
    // What a turn leaves besides its texts (a log line, a cache entry) reached 2.15 MB a message once with another
    // suite beside; a second copy of either text would be 3 MB.
    expect(perMessage).toBeLessThan(2.25 * MB);
    // 15 more: the history stays within session.max_bytes whatever is sent.
    for (let n = 5; n < 20; n++) await send(n);
    expect(h.runtime.stats().historyBytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect((await heapUsed()) - before).toBeLessThan(16 * 1024 * 1024 + 2 * MB);
    const kept: ChatMessage[] = await h.runtime.historyOf("agent:main:http:s4");
    expect(kept.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
