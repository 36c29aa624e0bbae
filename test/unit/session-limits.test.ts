/**
 * How many sessions a store holds in memory when `session.max_sessions` is
 * not set (DEFAULT_MAX_SESSIONS, src/config/schema.ts; the loaded config
 * says the value it took): a store that keeps its sessions on disk holds
 * the 1,000 used last and reads an older one back from its file when it is
 * used again; the memory store, which forgets what it evicts, holds 10,000.
 * A value in the config applies to either.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { loadConfig } from "../../src/house.js";
import { silentLogger } from "../../src/log.js";
import type { ChatMessage } from "../../src/models/message.js";
import { DEFAULT_MAX_SESSIONS } from "../../src/config/schema.js";
import { jsonlStore, memoryStore } from "../../src/session/stores.js";
import { writeProject } from "../support/project.js";

const exchange = (n: number): ChatMessage[] => [
  { role: "user", content: `hello ${n}` },
  { role: "assistant", content: `hi ${n}` },
];
const key = (n: number) => `agent:main:http:s${n}`;

function open(store: typeof jsonlStore, session: Record<string, unknown> = {}) {
  const cwd = writeProject({ config: { session: { store: store.type, ...session } } });
  const { config } = loadConfig({ env: {}, cwd });
  const opened = store.open({ config, options: undefined, baseDir: cwd, logger: silentLogger });
  onTestFinished(() => opened.history.close());
  return opened.history;
}

describe("sessions held in memory by default", () => {
  it("store jsonl holds the 1,000 sessions used last and reads an older one back from its file", async () => {
    const history = open(jsonlStore);
    for (let n = 0; n <= DEFAULT_MAX_SESSIONS.kept; n++) await history.append(key(n), exchange(n));
    const held = history.keys();
    expect(held).toHaveLength(1_000);
    expect(held).not.toContain(key(0));
    expect(held).toContain(key(1_000));
    // As a turn reads it: held (read back from its file), then its messages.
    const release = await history.hold(key(0));
    expect(await history.get(key(0))).toEqual(exchange(0));
    release();
    expect(history.keys()).toContain(key(0));
    expect(history.keys()).toHaveLength(1_000);
  });

  it("store memory holds 10,000 sessions: the 1,001st evicts none", async () => {
    const history = open(memoryStore);
    for (let n = 0; n <= DEFAULT_MAX_SESSIONS.kept; n++) await history.append(key(n), exchange(n));
    expect(history.keys()).toHaveLength(1_001);
    expect(DEFAULT_MAX_SESSIONS.memory).toBe(10_000);
  });

  it("the loaded config says the default it took (config check shows it): 1000 with jsonl or postgres, 10000 with memory, a set value as set", () => {
    const loaded = (session: Record<string, unknown>) => loadConfig({ env: {}, cwd: writeProject({ config: { session } }) }).config.session.max_sessions;
    expect(loaded({})).toBe(1_000);
    expect(loaded({ store: "memory" })).toBe(10_000);
    expect(loaded({ store: "memory", max_sessions: 7 })).toBe(7);
    expect(loaded({ max_sessions: 20_000 })).toBe(20_000);
  });

  it("session.max_sessions in the config bounds either store", async () => {
    for (const store of [jsonlStore, memoryStore]) {
      const history = open(store, { max_sessions: 3 });
      for (let n = 0; n < 5; n++) await history.append(key(n), exchange(n));
      expect(history.keys()).toEqual([key(2), key(3), key(4)]);
    }
  });
});
