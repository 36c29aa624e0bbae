/**
 * The session ports a fleet replaces: a store may bring its own turn order,
 * stop switches, outbox and feature state, and the runtime uses what it
 * brings without knowing; the built-in feature state keeps a feature's
 * entries, bounded, and (store jsonl) across a restart.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bootstrap } from "../../src/bootstrap.js";
import { PicoclawError } from "../../src/errors.js";
import { loadConfig } from "../../src/house.js";
import { defineFeature } from "../../src/port/feature.js";
import { type FeatureState, MemoryFeatureState } from "../../src/session/feature-state.js";
import { JsonlFeatureState } from "../../src/session/jsonl/jsonl-state.js";
import { KeyQueue } from "../../src/session/key-queue.js";
import { MemoryHistoryStore } from "../../src/session/memory-history.js";
import { Outbox } from "../../src/session/outbox.js";
import { StopSwitches } from "../../src/session/stop-switches.js";
import type { SessionStoreAdapter } from "../../src/session/store.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { recordingLogger, tempDir, writeProject } from "../support/project.js";

const LIMITS = { maxKeys: 3, maxBytes: 200 };

describe("feature state", () => {
  it.each([
    ["memory", () => new MemoryFeatureState(LIMITS)],
    ["jsonl", () => new JsonlFeatureState(tempDir(), LIMITS)],
  ])("%s: keeps JSON entries per namespace, each with a version; expect is a compare-and-set", async (_name, make) => {
    const store = make();
    expect(await store.put("cron", "a", { at: 1 })).toBe(1);
    expect(await store.put("cron", "a", { at: 2 })).toBe(2);
    expect(await store.get("cron", "a")).toEqual({ key: "a", value: { at: 2 }, version: 2 });
    expect(await store.get("approvals", "a")).toBeUndefined();
    // Two takers of one due run: the one that read version 2 first wins, the other is told no.
    expect(await store.put("cron", "a", { at: 3 }, 2)).toBe(3);
    expect(await store.put("cron", "a", { at: 3 }, 2)).toBeUndefined();
    expect(await store.put("cron", "b", "new", 0)).toBe(1);
    expect(await store.put("cron", "b", "again", 0)).toBeUndefined();
    expect((await store.list("cron")).map((e) => e.key)).toEqual(["a", "b"]);
    // What the store hands out is frozen: a change to it is a put, never a change behind the store's back.
    const held = (await store.get("cron", "a"))!.value as { at: number };
    expect(() => {
      held.at = 99;
    }).toThrow(TypeError);
    expect(await store.delete("cron", "a", 1)).toBe(false);
    expect(await store.delete("cron", "a", 3)).toBe(true);
    expect(await store.delete("cron", "a")).toBe(false);
    await store.close();
  });

  it.each([
    ["memory", () => new MemoryFeatureState(LIMITS)],
    ["jsonl", () => new JsonlFeatureState(tempDir(), LIMITS)],
  ])("%s: past state_max_keys or state_max_bytes a change is refused with state_full and changes nothing", async (_name, make) => {
    const store = make();
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
    await store.close();
  });

  it("jsonl: what was put is read back by the next process; a write that fails changes nothing; a broken file is an error naming it", async () => {
    const dir = tempDir();
    const first = new JsonlFeatureState(dir);
    await first.put("cron", "job-1", { every: "1h" });
    await first.close();
    const second = new JsonlFeatureState(dir);
    expect(await second.get("cron", "job-1")).toEqual({ key: "job-1", value: { every: "1h" }, version: 1 });
    await second.close();

    const file = path.join(dir, "state", "cron.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ entries: [{ key: "job-1", value: { every: "1h" }, version: 1 }] });
    writeFileSync(file, "{not json");
    const broken = new JsonlFeatureState(dir);
    await expect(broken.list("cron")).rejects.toThrow(`could not read ${file}`);
    writeFileSync(file, JSON.stringify({ entries: [] }));
    expect(await broken.list("cron")).toEqual([]);
    await broken.close();
    await expect(broken.put("cron", "late", 1)).rejects.toThrow("the session store is closed");
  });

  it("jsonl: a write that cannot be made changes nothing, and the next one that can is kept", async () => {
    const dir = tempDir();
    // A folder where the write's temporary file would go: the write fails before the file is replaced.
    mkdirSync(path.join(dir, "state", "cron.json.tmp"), { recursive: true });
    const store = new JsonlFeatureState(dir);
    await expect(store.put("cron", "job-1", { every: "1h" })).rejects.toMatchObject({ code: "storage_failed", replaced: false });
    expect(await store.get("cron", "job-1")).toBeUndefined();
    rmSync(path.join(dir, "state", "cron.json.tmp"), { recursive: true });
    expect(await store.put("cron", "job-1", { every: "2h" }, 0)).toBe(1);
    await store.close();
    expect(await new JsonlFeatureState(dir).get("cron", "job-1")).toMatchObject({ value: { every: "2h" }, version: 1 });
  });
});

/** A feature keeping a counter in its durable state, one tool call at a time. */
const counter = defineFeature({
  name: "counter",
  needs: ["state"],
  setup: (host) => ({
    tools: [
      defineTool({
        name: "count",
        description: "Counts calls, for good.",
        parameters: z.object({}),
        enabledByDefault: true,
        execute: async () => {
          const found = await host.state.get("calls");
          const next = ((found?.value as number | undefined) ?? 0) + 1;
          await host.state.put("calls", next, found?.version ?? 0);
          return toolResult.text(`count is ${next}`);
        },
      }),
    ],
    api: host.state,
  }),
});

describe("a feature's state through the runtime", () => {
  it("with store jsonl, a feature's state survives a restart; each feature sees only its own namespace", async () => {
    const dir = writeProject({ config: {} });
    const run = async () => {
      const loaded = loadConfig({ env: {}, cwd: dir });
      const { runtime } = bootstrap(loaded, { logger: recordingLogger(), features: [counter] });
      const outcome = await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "CALL count {}" });
      const state = runtime.featureApi(counter) as FeatureState;
      await runtime.close();
      return { reply: outcome.reply, state };
    };
    expect((await run()).reply).toContain("count is 1");
    const { reply } = await run();
    expect(reply).toContain("count is 2");
    expect(JSON.parse(readFileSync(path.join(dir, "sessions", "state", "counter.json"), "utf8")).entries).toEqual([{ key: "calls", value: 2, version: 2 }]);
  });

  it("a store's own turn order, stop switches, outbox and feature state are the ones the runtime uses", async () => {
    const used: string[] = [];
    class CountingOrder extends KeyQueue {
      override run<T>(key: string, work: () => Promise<T>): Promise<T> {
        used.push(`order ${key}`);
        return super.run(key, work);
      }
    }
    class CountingStops extends StopSwitches {
      override stop(key: string): Promise<boolean> {
        used.push(`stop ${key}`);
        return super.stop(key);
      }
    }
    class CountingOutbox extends Outbox {
      override publish(...args: Parameters<Outbox["publish"]>): void {
        if (args[1].type === "delivery") used.push(`deliver ${args[0]}`);
        super.publish(...args);
      }
    }
    const state = new MemoryFeatureState();
    const fleet: SessionStoreAdapter = {
      type: "fleet",
      description: "a store that brings every port",
      open: () => ({ history: new MemoryHistoryStore(), order: new CountingOrder(), stops: new CountingStops(), outbox: new CountingOutbox(), state }),
    };
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "fleet" } } }), extensions: { stores: [fleet] } });
    const { runtime } = bootstrap(loaded, { logger: recordingLogger(), features: [counter] });
    await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "CALL count {}" });
    await runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "/stop" });
    await runtime.close();
    expect(used).toEqual(["order agent:main:http:s", "deliver agent:main:http:s", "stop agent:main:http:s", "deliver agent:main:http:s"]);
    expect(await state.get("counter", "calls")).toMatchObject({ value: 1 });
  });

  it("a store that cannot open stops start-up with its own error", () => {
    const broken: SessionStoreAdapter = {
      type: "broken",
      description: "never opens",
      open: () => {
        throw new PicoclawError("the database at db.example is not reachable", { code: "storage_failed", fault: "system" });
      },
    };
    const loaded = loadConfig({ env: {}, cwd: writeProject({ config: { session: { store: "broken" } } }), extensions: { stores: [broken] } });
    expect(() => bootstrap(loaded, { logger: recordingLogger() })).toThrow("the database at db.example is not reachable");
  });
});
