import fs, { cpSync, existsSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { ChatMessage } from "../../src/models/message.js";
import { fileNameOf } from "../../src/session/jsonl/file-names.js";
import { JOURNAL_FILES, Journal } from "../../src/session/jsonl/journal.js";
import { HEAD_BYTES } from "../../src/session/jsonl/journal-records.js";
import { JsonlHistoryStore, type JsonlHistoryOptions } from "../../src/session/jsonl/jsonl-store.js";
import { LOCK_FILE } from "../../src/session/jsonl/dir-lock.js";
import { tempDir } from "../support/project.js";
import { waitFor } from "../support/wait.js";

/** The session folder's journal: one shared sync per batch of turns, and what it puts back after a crash (README, "Sessions on disk"). */

const turn = (n: number): ChatMessage[] => [
  { role: "user", content: `q${n}` },
  { role: "assistant", content: `a${n}` },
];
const keyOf = (n: number) => `agent:main:http:s${n}`;
const historyFile = (dir: string, key: string) => path.join(dir, `${fileNameOf(key)}.jsonl`);

function opener(dir: string, base: Partial<JsonlHistoryOptions> = {}) {
  const warnings: string[] = [];
  const open = () => {
    const store = JsonlHistoryStore.open({ dir, warn: (w) => warnings.push(w), ...base });
    onTestFinished(() => store.close());
    return store;
  };
  return { open, warnings };
}

async function reread(store: JsonlHistoryStore, key: string): Promise<ChatMessage[]> {
  (await store.hold(key))();
  return store.get(key);
}

/**
 * The folder as a power cut would leave it while `dir`'s store runs: the
 * journal as synced, no lock (its process is gone), in a copy of its own.
 */
function afterPowerCut(dir: string): string {
  const copy = tempDir();
  cpSync(dir, copy, { recursive: true });
  rmSync(path.join(copy, LOCK_FILE));
  return copy;
}

/**
 * Makes the next write to a file whose path ends with `suffix` fail as on a
 * full disk: the file layer's own writes (node's `fs.writeSync`, and a
 * FileHandle's `write`), until the test ends.
 */
async function failNextWrite(dir: string, suffix: string): Promise<void> {
  let failures = 1;
  const fails = (fd: number) => {
    if (failures === 0 || !readlinkSync(`/proc/self/fd/${fd}`).endsWith(suffix)) return false;
    failures--;
    return true;
  };
  const full = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
  const probe = await open(path.join(dir, "probe"), "w");
  const proto = Object.getPrototypeOf(probe) as { write(...args: unknown[]): Promise<unknown> };
  await probe.close();
  rmSync(path.join(dir, "probe"));
  const write = proto.write;
  proto.write = function (this: { fd: number }, ...args: unknown[]) {
    return fails(this.fd) ? Promise.reject(full()) : write.apply(this, args);
  };
  const writeSync = fs.writeSync;
  (fs as { writeSync: unknown }).writeSync = (fd: number, ...args: unknown[]) => {
    if (fails(fd)) throw full();
    return (writeSync as (...all: unknown[]) => number)(fd, ...args);
  };
  syncBuiltinESMExports();
  onTestFinished(() => {
    proto.write = write;
    (fs as { writeSync: unknown }).writeSync = writeSync;
    syncBuiltinESMExports();
  });
}

describe("the session folder's journal", () => {
  it("a power cut that loses what the session files were given since their last sync loses no acknowledged turn: the journal puts it back", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    for (let n = 1; n <= 3; n++) await store.append(keyOf(1), turn(n));
    await store.append(keyOf(2), turn(9));
    const copy = afterPowerCut(dir);
    expect(readdirSync(copy)).toContain(JOURNAL_FILES[0]);
    // What never reached the disk: the first file's last two turns, the second file (new, its folder entry never synced).
    const first = historyFile(copy, keyOf(1));
    truncateSync(
      first,
      Buffer.byteLength(
        turn(1)
          .map((m) => `${JSON.stringify(m)}\n`)
          .join(""),
      ),
    );
    rmSync(historyFile(copy, keyOf(2)));
    const { open, warnings } = opener(copy);
    const after = open();
    expect(await reread(after, keyOf(1))).toEqual([...turn(1), ...turn(2), ...turn(3)]);
    expect(await reread(after, keyOf(2))).toEqual(turn(9));
    expect(warnings).toEqual([`${copy}: 3 turn(s) a crash had left out of their session files were put back from the journal`]);
    // Replayed, the journal went; the new one holds only its head.
    await waitFor(
      "the new journal's head",
      () => existsSync(path.join(copy, JOURNAL_FILES[0])) && statSync(path.join(copy, JOURNAL_FILES[0])).size === HEAD_BYTES,
    );
    await after.close();
    expect(readdirSync(copy).filter((f) => f.startsWith("picoclaw.journal"))).toEqual([]);
  });

  it("after a kill -9 (the files hold every write) replaying the journal changes nothing, and says nothing", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    for (let n = 1; n <= 3; n++) await store.append(keyOf(n), turn(n));
    const copy = afterPowerCut(dir);
    const sizes = [1, 2, 3].map((n) => statSync(historyFile(copy, keyOf(n))).size);
    const { open, warnings } = opener(copy);
    const after = open();
    expect([1, 2, 3].map((n) => statSync(historyFile(copy, keyOf(n))).size)).toEqual(sizes);
    for (let n = 1; n <= 3; n++) expect(await reread(after, keyOf(n))).toEqual(turn(n));
    expect(warnings).toEqual([]);
  });

  it("a cleared session stays cleared after a power cut, and a rewritten file keeps what it was rewritten to: the journal replays nothing into them", async () => {
    const dir = tempDir();
    const store = opener(dir, { maxMessages: 10 }).open();
    await store.append(keyOf(1), turn(1));
    await store.clear(keyOf(1));
    // 30 exchanges into a session keeping 10 messages: rewritten whole on the way, more than once.
    for (let n = 1; n <= 30; n++) await store.append(keyOf(2), turn(n));
    await store.append(keyOf(2), turn(31));
    const copy = afterPowerCut(dir);
    const after = opener(copy, { maxMessages: 10 }).open();
    expect(existsSync(historyFile(copy, keyOf(1)))).toBe(false);
    expect(await reread(after, keyOf(1))).toEqual([]);
    expect(await reread(after, keyOf(2))).toEqual(await store.get(keyOf(2)));
  });

  it("a journal whose last batch a crash cut short puts back the batches before it, and no torn record", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    await store.append(keyOf(1), turn(1));
    await store.append(keyOf(1), turn(2));
    const copy = afterPowerCut(dir);
    const journal = path.join(copy, JOURNAL_FILES[0]);
    const file = historyFile(copy, keyOf(1));
    // The second turn's record cut in the middle; the file lost that turn too (so it was never answered).
    truncateSync(journal, statSync(journal).size - 5);
    truncateSync(
      file,
      Buffer.byteLength(
        turn(1)
          .map((m) => `${JSON.stringify(m)}\n`)
          .join(""),
      ),
    );
    const after = opener(copy).open();
    expect(await reread(after, keyOf(1))).toEqual(turn(1));
  });

  it("a full segment is checkpointed (its files synced, then it is deleted) while the other takes the turns, and a power cut after that loses nothing", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    const big = (n: number): ChatMessage[] => [
      { role: "user", content: `q${n} ${"x".repeat(64 * 1024)}` },
      { role: "assistant", content: `a${n}` },
    ];
    const sent = new Map<string, ChatMessage[]>();
    for (let n = 0; n < 80; n++) {
      const key = keyOf(n % 8);
      await store.append(key, big(n));
      sent.set(key, [...(sent.get(key) ?? []), ...big(n)]);
    }
    // 80 turns of 64 KiB: past one segment's 4 MiB, so the first segment is checkpointed and goes.
    await waitFor("the first segment to be checkpointed", () => !existsSync(path.join(dir, JOURNAL_FILES[0])));
    expect(existsSync(path.join(dir, JOURNAL_FILES[1]))).toBe(true);
    await store.append(keyOf(0), turn(1));
    sent.set(keyOf(0), [...sent.get(keyOf(0))!, ...turn(1)]);
    const copy = afterPowerCut(dir);
    const after = opener(copy).open();
    for (const [key, messages] of sent) expect(await reread(after, key)).toEqual(messages);
  });

  it("appends of many sessions at once share syncs: those that come while a sync runs are written by the next one, together", async () => {
    const dir = tempDir();
    const syncedFiles: string[] = [];
    const journal = new Journal(dir, { syncFile: async (name) => void syncedFiles.push(name), syncDir: async () => {}, warn: () => {} });
    const first = journal.append("agent_main_http_first", 0, Buffer.from("x\n"));
    // The first batch is being written and synced now (its end is seen no sooner than the loop's next poll).
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 20 }, (_, i) => journal.append(`agent_main_http_s${i}`, 0, Buffer.from(`line ${i}\n`)));
    await first;
    expect(journal.syncs).toBe(1);
    await Promise.all(rest);
    expect(journal.syncs).toBe(2);
    // Appends made at the same moment are one batch, one sync.
    await Promise.all(Array.from({ length: 10 }, (_, i) => journal.append(`agent_main_http_t${i}`, 0, Buffer.from(`line ${i}\n`))));
    expect(journal.syncs).toBe(3);
    await journal.close();
    // The clean stop syncs every file the journal had records of, then leaves no journal.
    expect(syncedFiles.sort()).toEqual(
      [
        "agent_main_http_first",
        ...Array.from({ length: 20 }, (_, i) => `agent_main_http_s${i}`),
        ...Array.from({ length: 10 }, (_, i) => `agent_main_http_t${i}`),
      ].sort(),
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a turn whose journal write fails (a full disk) is not kept: the turn gets the error naming the journal, the session file is cut back, and the next turn works", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    await store.append(keyOf(1), turn(1));
    await store.close();
    const again = opener(dir).open();
    // Once the journal is ready (its head written at start-up), its next write fails as on a full disk.
    const journal = path.join(dir, JOURNAL_FILES[0]);
    await waitFor("the journal's head", () => existsSync(journal) && statSync(journal).size === HEAD_BYTES);
    await failNextWrite(dir, JOURNAL_FILES[0]);
    await expect(again.append(keyOf(1), turn(2))).rejects.toMatchObject({ code: "storage_failed", message: expect.stringContaining(JOURNAL_FILES[0]) });
    expect(readFileSync(historyFile(dir, keyOf(1)), "utf8")).toBe(
      turn(1)
        .map((m) => `${JSON.stringify(m)}\n`)
        .join(""),
    );
    expect(await reread(again, keyOf(1))).toEqual(turn(1));
    await again.append(keyOf(1), turn(3));
    expect(await reread(again, keyOf(1))).toEqual([...turn(1), ...turn(3)]);
  });

  it("a turn whose session file write fails while its journal record was synced is not kept, even after a power cut: the record is disowned", async () => {
    const dir = tempDir();
    const store = opener(dir).open();
    await store.append(keyOf(1), turn(1));
    await failNextWrite(dir, `${fileNameOf(keyOf(1))}.jsonl`);
    await expect(store.append(keyOf(1), turn(2))).rejects.toMatchObject({ code: "storage_failed" });
    expect(await reread(store, keyOf(1))).toEqual(turn(1));
    const copy = afterPowerCut(dir);
    const after = opener(copy).open();
    expect(await reread(after, keyOf(1))).toEqual(turn(1));
    await store.append(keyOf(1), turn(3));
    expect(await reread(store, keyOf(1))).toEqual([...turn(1), ...turn(3)]);
  });

  it("a journal file that is not a file (a symlink planted at its name) stops start-up, naming it", () => {
    const dir = tempDir();
    const elsewhere = path.join(tempDir(), "elsewhere");
    writeFileSync(elsewhere, "");
    symlinkSync(elsewhere, path.join(dir, JOURNAL_FILES[1]));
    expect(() => opener(dir).open()).toThrow(
      expect.objectContaining({ code: "sessions_unusable", message: expect.stringContaining(`${path.join(dir, JOURNAL_FILES[1])} is not a file`) }),
    );
  });
});
