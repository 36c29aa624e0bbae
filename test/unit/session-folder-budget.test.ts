import fs, { readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "../../src/cli.js";
import type { ChatMessage } from "../../src/models/message.js";
import { LOCK_FILE } from "../../src/session/jsonl/dir-lock.js";
import { JsonlHistoryStore, type JsonlHistoryOptions } from "../../src/session/jsonl/jsonl-store.js";
import { SessionDirUnusableError } from "../../src/session/jsonl/storage-error.js";
import { CENSUS_DELAY_MS } from "../../src/session/jsonl/stored-index.js";
import { recordingLogger, tempDir, writeProject } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";

/** The session folder's byte budget, and a folder that cannot be written at start-up (README, "Sessions on disk"). */

const turn = (n: number, size = 0): ChatMessage[] => [
  { role: "user", content: `q${n}${"x".repeat(size)}` },
  { role: "assistant", content: `a${n}` },
];
const keyOf = (name: string) => `agent:main:http:${name}`;
const historiesIn = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort();

function opener(dir: string, base: Partial<JsonlHistoryOptions> = {}) {
  const warnings: string[] = [];
  const open = (extra: Partial<JsonlHistoryOptions> = {}) => {
    const store = JsonlHistoryStore.open({ dir, warn: (w) => warnings.push(w), ...base, ...extra });
    onTestFinished(() => store.close());
    return store;
  };
  return { open, warnings };
}

/** Makes `fs.<name>` fail with `code` while `when` says so (node's own module, as every caller sees it), until the test ends. */
function failing(name: "writeSync" | "openSync", code: string, when: (...args: unknown[]) => boolean): void {
  const original = fs[name] as (...args: unknown[]) => unknown;
  (fs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    if (when(...args)) throw Object.assign(new Error(`${code}: no space left on device, ${name === "writeSync" ? "write" : "open"}`), { code });
    return original(...args);
  };
  syncBuiltinESMExports();
  onTestFinished(() => {
    (fs as unknown as Record<string, unknown>)[name] = original;
    syncBuiltinESMExports();
  });
}

describe("the session folder's byte budget (session.max_stored_bytes)", () => {
  it("past it the sessions changed least recently are removed, a log line each, and the one just written stays however big", async () => {
    const dir = tempDir();
    const { open, warnings } = opener(dir, { maxStoredBytes: 3000 });
    const store = open();
    for (const name of ["a", "b", "c"]) await store.append(keyOf(name), turn(1, 900));
    expect(historiesIn(dir)).toEqual(["agent_main_http_a.jsonl", "agent_main_http_b.jsonl", "agent_main_http_c.jsonl"]);
    // d makes four files of about 1 KB: over 3000 bytes, so a goes; then e, bigger than the budget alone, leaves only itself.
    await store.append(keyOf("d"), turn(1, 900));
    await store.append(keyOf("e"), turn(1, 4000));
    await store.close();
    expect(historiesIn(dir)).toEqual(["agent_main_http_e.jsonl"]);
    expect(warnings).toEqual(
      ["a", "b", "c", "d"].map(
        (name) => `removed the stored session ${keyOf(name)}: session.max_stored_bytes keeps 3000 bytes of sessions, and it was changed least recently`,
      ),
    );
    expect(statSync(path.join(dir, "agent_main_http_e.jsonl")).size).toBeGreaterThan(3000);
  });

  it("a folder over its budget when the gateway starts is brought within it once counted, the oldest sessions first", async () => {
    const dir = tempDir();
    const first = opener(dir).open();
    for (const name of ["a", "b", "c", "d"]) {
      await first.append(keyOf(name), turn(1, 900));
      // Far enough apart for the files' times to order them.
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    await first.close();
    const timers = new ManualTimers();
    const { open, warnings } = opener(dir, { maxStoredBytes: 2500, timer: timers.timer });
    const store = open();
    // Opening counted nothing; the first change starts the count's timer.
    await store.append(keyOf("d"), turn(2));
    expect(historiesIn(dir)).toHaveLength(4);
    expect(timers.fireAll(CENSUS_DELAY_MS)).toBe(1);
    await store.close();
    expect(historiesIn(dir)).toEqual(["agent_main_http_c.jsonl", "agent_main_http_d.jsonl"]);
    expect(warnings.map((w) => w.split(":").slice(0, 4).join(":"))).toEqual([
      "removed the stored session agent:main:http:a",
      "removed the stored session agent:main:http:b",
    ]);
  });
});

describe("sessions stored before the gateway started, counted in the background", () => {
  /** `count` sessions of one exchange, as a gateway wrote them, the i-th changed i seconds after the first. */
  function stored(dir: string, count: number): void {
    const first = Date.now() / 1000 - count - 10;
    for (let i = 0; i < count; i++) {
      const file = path.join(dir, `agent_main_http_old${i}.jsonl`);
      writeFileSync(
        file,
        turn(i)
          .map((m) => `${JSON.stringify(m)}\n`)
          .join(""),
      );
      utimesSync(file, first + i, first + i);
    }
  }

  it("the list of 1,500 sessions stored is the newest first, from one count of the folder that keeps the 1,000 newest only", async () => {
    const dir = tempDir();
    stored(dir, 1500);
    const store = opener(dir).open();
    await store.append(keyOf("now"), turn(1));
    const listed = await store.list(1000);
    expect(listed).toHaveLength(1000);
    expect(listed.map((s) => s.key)).toEqual([keyOf("now"), ...Array.from({ length: 999 }, (_, i) => keyOf(`old${1499 - i}`))]);
    expect(listed.every((s) => s.messages === 2)).toBe(true);
  });

  it("files changed apart are listed in their files' order, and only those too close to tell apart in their meta files' (a gateway clock that disagrees with the file system's reorders nothing else)", async () => {
    const dir = tempDir();
    // The gateway's clock a day behind the file system's, a second on at each change: b, then a, then c.
    let time = Date.now() - 86_400_000;
    const first = opener(dir).open({ now: () => (time += 1000) });
    for (const name of ["b", "a", "c"]) await first.append(keyOf(name), turn(1));
    await first.close();
    // b changed well before a and c, which the file system's clock cannot tell apart (a meta file can: a, then c).
    const at = Date.now() / 1000 - 60;
    utimesSync(path.join(dir, "agent_main_http_b.jsonl"), at, at);
    utimesSync(path.join(dir, "agent_main_http_c.jsonl"), at + 30, at + 30);
    utimesSync(path.join(dir, "agent_main_http_a.jsonl"), at + 30.01, at + 30.01);
    const listed = await opener(dir).open().list(10);
    expect(listed.map((s) => s.key)).toEqual([keyOf("c"), keyOf("a"), keyOf("b")]);
  });

  it("1,100 sessions stored and session.max_stored 1000: once counted, the 101 changed least recently go (the new one stays)", async () => {
    const dir = tempDir();
    stored(dir, 1100);
    const timers = new ManualTimers();
    const { open, warnings } = opener(dir, { maxStored: 1000, timer: timers.timer });
    const store = open();
    await store.append(keyOf("now"), turn(1));
    timers.fireAll(CENSUS_DELAY_MS);
    await store.close();
    const left = historiesIn(dir);
    expect(left).toHaveLength(1000);
    expect(left).toContain("agent_main_http_now.jsonl");
    expect(left).not.toContain("agent_main_http_old100.jsonl");
    expect(left).toContain("agent_main_http_old101.jsonl");
    expect(warnings).toHaveLength(101);
    expect(warnings[0]).toBe(`removed the stored session ${keyOf("old0")}: session.max_stored keeps 1000 sessions, and it was changed least recently`);
  });
});

describe("a session folder that cannot be written at start-up", () => {
  it("a full disk while taking the lock: SessionDirUnusableError naming the folder, and no half-written lock left", () => {
    const dir = tempDir();
    failing("writeSync", "ENOSPC", (fd) => typeof fd === "number" && fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(LOCK_FILE));
    let refusal: unknown;
    try {
      opener(dir).open();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SessionDirUnusableError);
    expect((refusal as SessionDirUnusableError).code).toBe("sessions_unusable");
    expect((refusal as Error).message).toBe(
      `the session folder ${dir} cannot be used (ENOSPC: no space left on device, write): the disk it is on is full. Free some space there, or give session.dir a folder on another disk`,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it("picoclaw gateway on a full disk exits 2 with that message, not a bare ENOSPC", async () => {
    const project = writeProject({ config: {} });
    const sessions = path.join(project, "sessions");
    failing("openSync", "ENOSPC", (file) => file === path.join(sessions, LOCK_FILE));
    const err: string[] = [];
    const code = await runCli({ argv: ["gateway"], env: {}, cwd: project, stdout: () => {}, stderr: (t) => err.push(t), logger: recordingLogger() });
    expect(code).toBe(2);
    expect(err.join("\n")).toBe(
      `picoclaw: sessions_unusable: the session folder ${sessions} cannot be used (ENOSPC: no space left on device, open): the disk it is on is full. Free some space there, or give session.dir a folder on another disk`,
    );
  });
});
