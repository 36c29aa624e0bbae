import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it, onTestFinished } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { LOCK_FILE, SessionDirBusyError } from "../../src/session/jsonl/dir-lock.js";
import { MAX_NAME, fileNameOf, keyOfFileName } from "../../src/session/jsonl/file-names.js";
import { JsonlHistoryStore, type JsonlHistoryOptions } from "../../src/session/jsonl/jsonl-store.js";
import { MAX_OPEN } from "../../src/session/jsonl/session-files.js";
import { LOST_RESULT } from "../../src/session/jsonl/transcript.js";
import { tempDir } from "../support/project.js";

/** The JSONL session store on real files in a temporary folder (README, "Sessions on disk"). */

const KEY = "agent:main:http:s1";

const turn = (n: number, tool = false): ChatMessage[] =>
  tool
    ? [
        { role: "user", content: `q${n}` },
        { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "tool", tool_call_id: `c${n}`, content: `r${n}` },
        { role: "assistant", content: `a${n}` },
      ]
    : [
        { role: "user", content: `q${n}` },
        { role: "assistant", content: `a${n}` },
      ];

function opener(dir: string, base: Partial<JsonlHistoryOptions> = {}) {
  const warnings: string[] = [];
  const open = (extra: Partial<JsonlHistoryOptions> = {}) => {
    const store = JsonlHistoryStore.open({ dir, warn: (w) => warnings.push(w), ...base, ...extra });
    onTestFinished(() => store.close());
    return store;
  };
  return { open, warnings };
}

const historyFile = (dir: string, key = KEY) => path.join(dir, `${fileNameOf(key)}.jsonl`);
const metaFile = (dir: string, key = KEY) => path.join(dir, `${fileNameOf(key)}.meta.json`);
const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ChatMessage);

/** A session read back as a turn reads it: held (loaded from its file), then taken. */
async function reread(store: JsonlHistoryStore, key = KEY): Promise<ChatMessage[]> {
  const release = await store.hold(key);
  release();
  return store.get(key);
}

describe("the JSONL session store", () => {
  it("a history written by one gateway is there for the next one on the same folder (a restart)", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const first = open();
    await first.append(KEY, turn(1, true));
    await first.append(KEY, turn(2));
    await first.close();
    const second = open();
    expect(await second.get(KEY)).toEqual([]);
    expect(await reread(second)).toEqual([...turn(1, true), ...turn(2)]);
    expect(await second.page(KEY, 2)).toEqual({ messages: turn(2), total: 6 });
  });

  it("no list of sessions is read at start-up: a session's first turn reads its file, even one put there by hand while the gateway runs", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const store = open();
    await store.append(KEY, turn(1));
    const other = "agent:main:http:by-hand";
    writeFileSync(
      historyFile(dir, other),
      `${turn(7)
        .map((m) => JSON.stringify(m))
        .join("\n")}\n`,
    );
    expect(await reread(store, other)).toEqual(turn(7));
    expect(await reread(store)).toEqual(turn(1));
    await store.close();
    const next = open();
    expect(await reread(next, other)).toEqual(turn(7));
  });

  it("keeps one OpenAI-style message per line, appended, and a meta file naming the session", async () => {
    const dir = tempDir();
    const store = opener(dir, { now: () => Date.parse("2026-12-01T10:00:00.000Z") }).open();
    await store.append(KEY, turn(1, true));
    await store.append(KEY, turn(2));
    await store.close();
    expect(lines(historyFile(dir))).toEqual([...turn(1, true), ...turn(2)]);
    expect(readFileSync(historyFile(dir), "utf8").split("\n")[1]).toBe(
      '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}]}',
    );
    expect(JSON.parse(readFileSync(metaFile(dir), "utf8"))).toEqual({
      key: KEY,
      agent: "main",
      created_at: "2026-12-01T10:00:00.000Z",
      updated_at: "2026-12-01T10:00:00.000Z",
      count: 6,
      bytes: statSync(historyFile(dir)).size,
    });
    expect(statSync(historyFile(dir)).mode & 0o777).toBe(0o600);
  });

  it("a torn last line, a corrupt middle line and an orphaned tool call: the session loads, each problem named by file and line, and the next turn cleans the file", async () => {
    const dir = tempDir();
    const { open, warnings } = opener(dir);
    mkdirSync(dir, { recursive: true });
    const file = historyFile(dir);
    const good = [...turn(1), turn(2, true)[0]!, turn(2, true)[1]!, turn(2, true)[3]!];
    writeFileSync(
      file,
      [JSON.stringify(good[0]), "{not json", JSON.stringify(good[1]), JSON.stringify(good[2]), JSON.stringify(good[3]), JSON.stringify(good[4])].join("\n") +
        '\n{"role":"user","content":"q3 never fini',
    );
    const store = open();
    const loaded = await reread(store);
    expect(loaded).toEqual([
      ...turn(1),
      { role: "user", content: "q2" },
      turn(2, true)[1]!,
      { role: "tool", tool_call_id: "c2", content: LOST_RESULT, is_error: true },
      { role: "assistant", content: "a2" },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^${file.replace(/[.]/g, "\\.")}: line 2 is not JSON \\(.+\\); skipped$`)),
      `${file}: line 7 is cut short (39 bytes without a line break: a write that never finished); left out`,
      `${file}: the tool call c2 had no result; an error result says so`,
    ]);
    await store.append(KEY, turn(3));
    expect(lines(file)).toEqual([...loaded, ...turn(3)]);
    await store.close();
    warnings.length = 0;
    expect(await reread(open())).toEqual([...loaded, ...turn(3)]);
    expect(warnings).toEqual([]);
  });

  it("a turn whose write was cut short is left out whole: every completed turn is there exactly once", async () => {
    const dir = tempDir();
    const { open, warnings } = opener(dir);
    const first = open();
    await first.append(KEY, turn(1));
    await first.close();
    const file = historyFile(dir);
    const unfinished = [
      ...turn(2, true)
        .slice(0, 2)
        .map((m) => JSON.stringify(m)),
      JSON.stringify(turn(2, true)[2]).slice(0, 10),
    ].join("\n");
    writeFileSync(file, readFileSync(file, "utf8") + unfinished);
    const store = open();
    expect(await reread(store)).toEqual(turn(1));
    expect(warnings).toEqual([
      `${file}: line 5 is cut short (10 bytes without a line break: a write that never finished); the turn it belongs to (from line 3) never finished and is left out`,
    ]);
    expect(lines(file)).toEqual(turn(1));
    await store.append(KEY, turn(3));
    expect(lines(file)).toEqual([...turn(1), ...turn(3)]);
  });

  describe("a damaged end of file loses no acknowledged turn", () => {
    /** Three completed turns written by the store, then `tail` appended (or `head` prepended) by the damage. */
    async function damaged(damage: { head?: string; tail?: string }) {
      const dir = tempDir();
      const { open, warnings } = opener(dir);
      const first = open();
      for (const n of [1, 2, 3]) await first.append(KEY, turn(n, n === 2));
      await first.close();
      const file = historyFile(dir);
      writeFileSync(file, `${damage.head ?? ""}${readFileSync(file, "utf8")}${damage.tail ?? ""}`);
      const store = open();
      return { store, file, warnings };
    }
    const all = [...turn(1), ...turn(2, true), ...turn(3)];

    it("NUL padding after the last line (a file system's, after a crash) is ignored: 3 turns are 3", async () => {
      const { store, file, warnings } = await damaged({ tail: "\0".repeat(4096) });
      expect(await reread(store)).toEqual(all);
      expect(warnings).toEqual([`${file}: ends in 4096 bytes of padding after line 8; ignored`]);
      // And the next turn goes after the third, the padding gone.
      await store.append(KEY, turn(4));
      expect(lines(file)).toEqual([...all, ...turn(4)]);
    });

    it("stray bytes after the last complete turn are left out, and the turn before them stays", async () => {
      const { store, file, warnings } = await damaged({ tail: "xy\u0001z" });
      expect(await reread(store)).toEqual(all);
      expect(warnings).toEqual([`${file}: line 9 is cut short (4 bytes without a line break: a write that never finished); left out`]);
    });

    it("a torn non-user line after a complete turn (a record's write cut short) leaves the turn be", async () => {
      const { store, warnings } = await damaged({ tail: '{"role":"assistant","content":"half' });
      expect(await reread(store)).toEqual(all);
      expect(warnings).toHaveLength(1);
    });

    it("a byte-order mark before the first line does not cost the first message", async () => {
      const { store, warnings } = await damaged({ head: "\uFEFF" });
      expect(await reread(store)).toEqual(all);
      expect(warnings).toEqual([]);
    });
  });

  it("keys map to distinct, safe file names, readable back (case, punctuation, length)", () => {
    const keys = [
      "agent:main:http:Bob",
      "agent:main:http:bob",
      "agent:main:http:a.b",
      "agent:main:http:a_b",
      "agent:main:http:a~b",
      "agent:main:http:a~5fb",
      "agent:main:http:..",
      "agent:main:http:@+=",
      "agent:main_x:http:y",
      "agent:main:x_http:y",
      "agent:main:telegram:-1001234567890",
      `agent:main:http:${"A".repeat(128)}`,
      `agent:main:http:${"A".repeat(127)}B`,
    ];
    const names = keys.map(fileNameOf);
    expect(new Set(names).size).toBe(keys.length);
    for (const name of names) {
      expect(name).toMatch(/^[a-z0-9_~-]+$/);
      expect(name.length).toBeLessThanOrEqual(MAX_NAME);
    }
    expect(names.slice(0, 3)).toEqual(["agent_main_http_~42ob", "agent_main_http_bob", "agent_main_http_a~2eb"]);
    expect(names.slice(0, -2).map(keyOfFileName)).toEqual(keys.slice(0, -2));
    // Names of long keys are cut and end in a hash: they are read back from the meta file.
    expect(names.slice(-2).map(keyOfFileName)).toEqual([null, null]);
    expect(names.at(-1)).toMatch(/~~[0-9a-f]{32}$/);
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 }), (a, b) => {
        const [x, y] = [fileNameOf(a), fileNameOf(b)];
        expect(x).toMatch(/^[a-z0-9_~-]+$/);
        if (a !== b) expect(x).not.toBe(y);
        const back = keyOfFileName(x);
        if (back !== null) expect(back).toBe(a);
      }),
    );
  });

  it("a session whose key is too long for a file name is found again through its meta file", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const key = `agent:main:http:${"Z".repeat(128)}`;
    const first = open();
    await first.append(key, turn(1));
    await first.close();
    const second = open();
    expect((await second.list(10)).map((s) => s.key)).toEqual([key]);
    expect(await reread(second, key)).toEqual(turn(1));
  });

  it("a session under a shortened name whose meta file a crash left unwritten is read by its next turn, and memory and file stay the same", async () => {
    const dir = tempDir();
    const { open, warnings } = opener(dir);
    const key = `agent:main:http:${"Z".repeat(128)}`;
    writeFileSync(
      historyFile(dir, key),
      `${turn(1)
        .map((m) => JSON.stringify(m))
        .join("\n")}\n`,
    );
    const store = open();
    expect(await store.list(10)).toEqual([]);
    expect(warnings.join("\n")).toContain("cannot tell which session it holds");
    expect(await reread(store, key)).toEqual(turn(1));
    await store.append(key, turn(2));
    expect(await store.get(key)).toEqual([...turn(1), ...turn(2)]);
    expect(lines(historyFile(dir, key))).toEqual([...turn(1), ...turn(2)]);
  });

  it("clear is durable: the files go, and after a restart the session is empty", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const first = open();
    await first.append(KEY, turn(1));
    await first.append("agent:main:http:other", turn(1));
    await first.clear(KEY);
    expect(existsSync(historyFile(dir))).toBe(false);
    expect(existsSync(metaFile(dir))).toBe(false);
    await first.close();
    const second = open();
    expect(await reread(second)).toEqual([]);
    expect((await second.list(10)).map((s) => s.key)).toEqual(["agent:main:http:other"]);
  });

  it("a second store on the same folder refuses, naming the folder and the owner; a lock left by a process that no longer runs is taken over", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const first = open();
    let refusal: unknown;
    try {
      open();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SessionDirBusyError);
    expect((refusal as SessionDirBusyError).code).toBe("sessions_locked");
    expect((refusal as Error).message).toContain(`the session folder ${dir} is in use: this process holds ${path.join(dir, LOCK_FILE)} already`);
    await first.close();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    // A lock whose process is gone (killed, or the machine lost power): no process has this id.
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 2_147_483_646, host: (await import("node:os")).hostname(), started_at: "earlier" }));
    const taker = open();
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), "utf8")).pid).toBe(process.pid);
    await taker.append(KEY, turn(1));
    expect(await reread(taker)).toEqual(turn(1));
  });

  it("a lock naming this process's own pid, left by a run before (a container's PID 1 after a restart), is taken over", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, host: hostname(), started_at: "earlier", start_ticks: "1", boot_id: bootId }));
    const store = open();
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), "utf8")).start_ticks).not.toBe("1");
    await store.close();
  });

  it("a lock naming a live pid with another start time (the pid reused by another process), or from another boot, is taken over; the live owner itself is refused", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    // The parent process runs (the test runner): its real start time, as its own lock would say.
    const stat = readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    const startTicks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
    const lockOf = (fields: object) =>
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, host: hostname(), started_at: "earlier", ...fields }));
    lockOf({ start_ticks: startTicks, boot_id: bootId });
    expect(() => open()).toThrow(`another gateway (process ${process.ppid} on ${hostname()}, since earlier) owns it`);
    lockOf({ start_ticks: String(Number(startTicks) + 1), boot_id: bootId });
    await open().close();
    lockOf({ start_ticks: startTicks, boot_id: "another-boot" });
    await open().close();
    // A lock of an older gateway that recorded no start time: a live pid is taken at its word.
    lockOf({});
    expect(() => open()).toThrow(SessionDirBusyError);
  });

  it("history pages of sessions not in memory are read at most max_disk_reads at once, each reader waiting its turn, every page right", async () => {
    const dir = tempDir();
    const store = opener(dir, { maxSessions: 1, maxDiskReads: 2 }).open();
    const keys = Array.from({ length: 12 }, (_, i) => `agent:main:http:r${i}`);
    for (const [i, key] of keys.entries()) await store.append(key, turn(i));
    // Every page read from a file is watched: how many run at once.
    const proto = JsonlHistoryStore.prototype as unknown as { pageFromFile(key: string, limit: number): Promise<unknown> };
    const original = proto.pageFromFile;
    let running = 0;
    let most = 0;
    proto.pageFromFile = async function (this: unknown, key: string, limit: number) {
      running++;
      most = Math.max(most, running);
      try {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return await original.call(this, key, limit);
      } finally {
        running--;
      }
    };
    onTestFinished(() => {
      proto.pageFromFile = original;
    });
    const pages = await Promise.all(keys.slice(0, -1).map((key) => store.page(key, 10)));
    expect(most).toBe(2);
    expect(pages.map((page) => page.messages)).toEqual(keys.slice(0, -1).map((_, i) => turn(i)));
  });

  it("touches only files it can prove its own: another program's *.tmp, *.meta.json and *.jsonl stay and are not listed; its own crash leftovers go", async () => {
    const dir = tempDir();
    const first = opener(dir).open();
    await first.append(KEY, turn(1));
    await first.close();
    const own = fileNameOf(KEY);
    const planted = {
      "notes.jsonl": '{"role":"user","content":"not a session"}\n',
      "backup.tmp": "someone's temp file",
      "report.meta.json": '{"key":"x"}',
      "agent_main_http_gone.meta.json": '{"key":"agent:main:http:elsewhere","agent":"main","created_at":"","updated_at":"","count":1,"bytes":1}',
    };
    for (const [name, text] of Object.entries(planted)) writeFileSync(path.join(dir, name), text);
    // This store's own leftovers: a temp file of its history, and the meta file of a session whose history is gone.
    writeFileSync(path.join(dir, `${own}.jsonl.tmp`), "half a rewrite");
    const orphan = "agent:main:http:orphan";
    writeFileSync(
      path.join(dir, `${fileNameOf(orphan)}.meta.json`),
      JSON.stringify({ key: orphan, agent: "main", created_at: "", updated_at: "", count: 1, bytes: 1 }),
    );
    const { open, warnings } = opener(dir);
    const store = open();
    expect((await store.list(10)).map((s) => s.key)).toEqual([KEY]);
    for (const name of Object.keys(planted)) expect(existsSync(path.join(dir, name)), name).toBe(true);
    expect(existsSync(path.join(dir, `${own}.jsonl.tmp`))).toBe(false);
    expect(existsSync(path.join(dir, `${fileNameOf(orphan)}.meta.json`))).toBe(false);
    expect(warnings).toContainEqual(expect.stringContaining("notes.jsonl: not a session file of this gateway"));
    await store.close();
  });

  it("a session file that is a symlink is neither listed nor followed out of the folder", async () => {
    const dir = tempDir();
    const outside = path.join(tempDir(), "secret.jsonl");
    writeFileSync(outside, '{"role":"user","content":"outside the folder"}\n');
    symlinkSync(outside, path.join(dir, `${fileNameOf(KEY)}.jsonl`));
    const store = opener(dir).open();
    expect(await store.list(10)).toEqual([]);
    await expect(store.page(KEY, 10)).rejects.toThrow(/could not read .*ELOOP|too many symbolic links/i);
    await expect(store.append(KEY, turn(1))).rejects.toThrow(/ELOOP|symbolic link/i);
    expect(readFileSync(outside, "utf8")).toBe('{"role":"user","content":"outside the folder"}\n');
    await store.close();
  });

  it("a session file that is a symlink to nothing is refused, not taken for a session with no file", async () => {
    const dir = tempDir();
    const nowhere = path.join(tempDir(), "gone.jsonl");
    symlinkSync(nowhere, path.join(dir, `${fileNameOf(KEY)}.jsonl`));
    const store = opener(dir).open();
    await expect(store.page(KEY, 10)).rejects.toThrow(/could not read .*ELOOP|too many symbolic links/i);
    await expect(store.append(KEY, turn(1))).rejects.toThrow(/ELOOP|symbolic link/i);
    expect(existsSync(nowhere)).toBe(false);
    await store.close();
  });

  it("an evicted session is read back from its file; reading its page does not bring it into memory", async () => {
    const dir = tempDir();
    const store = opener(dir, { maxSessions: 1 }).open();
    await store.append(KEY, turn(1));
    await store.append("agent:main:http:s2", turn(2));
    expect(store.keys()).toEqual(["agent:main:http:s2"]);
    expect(await store.page(KEY, 10)).toEqual({ messages: turn(1), total: 2 });
    expect(store.keys()).toEqual(["agent:main:http:s2"]);
    expect(await reread(store)).toEqual(turn(1));
    expect(store.keys()).toEqual([KEY]);
    await store.append(KEY, turn(3));
    expect(lines(historyFile(dir))).toEqual([...turn(1), ...turn(3)]);
  });

  it("the file is rewritten with what the session keeps once it grows past twice the session's limits", async () => {
    const dir = tempDir();
    const store = opener(dir, { maxMessages: 10 }).open();
    let longest = 0;
    for (let n = 1; n <= 30; n++) {
      await store.append(KEY, turn(n));
      longest = Math.max(longest, lines(historyFile(dir)).length);
    }
    expect(longest).toBeLessThanOrEqual(20);
    expect(await store.get(KEY)).toEqual(Array.from({ length: 5 }, (_, i) => turn(26 + i)).flat());
    await store.close();
    expect(await reread(opener(dir, { maxMessages: 10 }).open())).toEqual(Array.from({ length: 5 }, (_, i) => turn(26 + i)).flat());
  });

  it("an exchange cut to fit is written as it is kept", async () => {
    const dir = tempDir();
    const store = opener(dir, { maxBytes: 16 * 1024 }).open();
    await store.append(KEY, [
      { role: "user", content: "x".repeat(40_000) },
      { role: "assistant", content: "ok" },
    ]);
    const kept = await store.get(KEY);
    expect(kept[0]!.content).toMatch(/\[cut: this message was 40000 bytes/);
    expect(lines(historyFile(dir))).toEqual(kept);
  });

  it("a write that fails changes nothing: the turn gets the error, and memory holds what the file holds", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    await store.append(KEY, turn(1));
    // Enough other sessions written that this one's file is no longer kept open...
    for (let n = 0; n < MAX_OPEN; n++) await store.append(`agent:main:http:other${n}`, turn(n));
    // ...and its place taken by a folder: the next write cannot happen.
    rmSync(historyFile(dir));
    mkdirSync(historyFile(dir));
    await expect(store.append(KEY, turn(2))).rejects.toMatchObject({ code: "storage_failed", message: expect.stringContaining(historyFile(dir)) });
    expect(await store.get(KEY)).toEqual([]);
    rmSync(historyFile(dir), { recursive: true });
    expect(await reread(store)).toEqual([]);
    await store.append(KEY, turn(3));
    expect(await reread(store)).toEqual(turn(3));
  });

  it("lists sessions on disk, most recently changed first, with their message counts, also after a restart", async () => {
    const dir = tempDir();
    let now = Date.parse("2026-12-01T10:00:00.000Z");
    const { open } = opener(dir, { now: () => (now += 1000) });
    const store = open({ maxSessions: 2 });
    await store.append("agent:main:http:a", turn(1));
    await store.append("agent:main:http:b", [...turn(1), ...turn(2)]);
    await store.append("agent:main:http:c", turn(1));
    await store.append("agent:main:http:a", turn(2));
    const expected = [
      { key: "agent:main:http:a", messages: 4 },
      { key: "agent:main:http:c", messages: 2 },
      { key: "agent:main:http:b", messages: 4 },
    ];
    expect((await store.list(10)).map(({ key, messages }) => ({ key, messages }))).toEqual(expected);
    expect((await store.list(2)).map((s) => s.key)).toEqual(["agent:main:http:a", "agent:main:http:c"]);
    const [latest] = await store.list(1);
    expect(latest!.updatedAt).toBe(now);
    await store.close();
    const again = open();
    expect((await again.list(10)).map(({ key, messages }) => ({ key, messages }))).toEqual(expected);
  });

  it("a meta file that no longer matches its history (a crash between the two writes) is not trusted", async () => {
    const dir = tempDir();
    const { open } = opener(dir);
    const store = open();
    await store.append(KEY, turn(1));
    await store.close();
    writeFileSync(
      historyFile(dir),
      `${readFileSync(historyFile(dir), "utf8")}${turn(2)
        .map((m) => JSON.stringify(m))
        .join("\n")}\n`,
    );
    expect((await open().list(10)).map(({ key, messages }) => ({ key, messages }))).toEqual([{ key: KEY, messages: 4 }]);
  });

  it("keeps at most max_stored sessions on disk: the one changed least recently goes, with a warning", async () => {
    const dir = tempDir();
    const { open, warnings } = opener(dir, { maxStored: 2 });
    const store = open();
    for (const chat of ["a", "b", "c"]) await store.append(`agent:main:http:${chat}`, turn(1));
    await store.close();
    expect(readdirSync(dir).sort()).toEqual(
      ["agent_main_http_b.jsonl", "agent_main_http_b.meta.json", "agent_main_http_c.jsonl", "agent_main_http_c.meta.json"].sort(),
    );
    expect(warnings).toEqual(["removed the stored session agent:main:http:a: session.max_stored keeps 2 sessions, and it was changed least recently"]);
  });

  it("subagent sessions are never written", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    const child = `${KEY}:subagent:x1`;
    await store.append(child, turn(1));
    expect(await store.get(child)).toEqual(turn(1));
    await store.close();
    expect(readdirSync(dir)).toEqual([]);
  });
});
