import { close, closeSync, constants, fdatasync, fsyncSync, lstatSync, mkdirSync, opendirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { type FileHandle, lstat, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { setImmediate as nextTick } from "node:timers/promises";
import { agentOfKey, parseSessionKey } from "../key.js";
import { fileNameOf, keyOfFileName } from "./file-names.js";
import type { TailFile } from "./history-tail.js";
import { Journal } from "./journal.js";
import { replayJournal } from "./journal-replay.js";
import { StorageError } from "./storage-error.js";

/**
 * The files of a session folder, and with the journal (journal.ts,
 * journal-replay.ts) the only code that touches them: `<name>.jsonl` (the
 * history, one message a line, appended to) and `<name>.meta.json` (key,
 * agent, times, message count), where `<name>` is the key's file name
 * (file-names.ts). What must survive a crash is durable before a write
 * resolves: an append (a plain write to a file kept open, MAX_OPEN at most,
 * and the same bytes in the journal, whose one fdatasync is shared with
 * every append written meanwhile), a rewrite (a temporary file synced,
 * renamed over the old one, the folder synced), a removal (the folder
 * synced); before a rewrite or a removal, the journal is told (`retire`).
 * Meta files are a convenience: written without a sync, checked against
 * the history's size when read.
 */

export const HISTORY_EXT = ".jsonl";
export const META_EXT = ".meta.json";
const TMP_EXT = ".tmp";

/** What a session's meta file holds (PicoClaw's fields, and `bytes`: the history file's size it describes). */
export interface SessionMeta {
  key: string;
  agent: string;
  created_at: string;
  updated_at: string;
  count: number;
  bytes: number;
}

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

export interface ScannedHistory {
  name: string;
  bytes: number;
  mtimeMs: number;
}

/**
 * A history file open for appending: a plain descriptor, opened on the event
 * loop (a file made or opened in the page cache waits for no disk, where a
 * trip to the thread pool would sit between a new session's last model
 * answer and its reply), and synced and closed through the thread pool.
 */
interface OpenFile {
  fd: number;
  /** Appends writing to it now. */
  busy: number;
}

/** History files kept open for appending at once (more only while that many are being written). */
export const MAX_OPEN = 64;
/** Folder entries a walk reads between two turns of the event loop. */
export const WALK_SLICE = 256;
/** O_NOFOLLOW where the platform has it: a history file that is a symlink is refused (ELOOP), never followed. */
const NOFOLLOW = (constants.O_NOFOLLOW as number | undefined) ?? 0;
const APPEND_FLAGS = constants.O_APPEND | constants.O_CREAT | constants.O_WRONLY | NOFOLLOW;
const NO_THROW = { throwIfNoEntry: false } as const;

const datasyncFd = (fd: number) => new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
const closeFd = (fd: number) => new Promise<void>((resolve, reject) => close(fd, (error) => (error ? reject(error) : resolve())));

/** Cuts a file to `bytes` through a handle opened without following a symlink (truncate(path) would cut the link's target). */
async function truncateHere(file: string, bytes: number): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | NOFOLLOW);
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
}

export class SessionFiles {
  /** The folder, open for syncing its entries. */
  private folder: Promise<FileHandle> | undefined;
  /** History files open for appending, least recently used first. */
  private readonly handles = new Map<string, OpenFile>();
  /** Files being closed after an append (the least recently used past the limit). */
  private closingIdle: Promise<void> = Promise.resolve();
  private readonly journal: Journal;
  /** The folder's path and a separator: a file's path is this and its name. */
  private readonly prefix: string;

  /** The folder (made if missing, readable by this user only). */
  constructor(
    readonly dir: string,
    private readonly warn: (message: string) => void = () => {},
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.prefix = path.join(dir, path.sep);
    this.journal = new Journal(dir, { syncFile: (name) => this.syncFile(name), syncDir: () => this.syncDir(), warn });
  }

  historyFile(name: string): string {
    return this.prefix + name + HISTORY_EXT;
  }

  private metaFile(name: string): string {
    return this.prefix + name + META_EXT;
  }

  /** Puts back what a crash left in the journal (journal-replay.ts), then readies the journal: once, at start-up, with the folder's lock held. */
  recover(): void {
    replayJournal({
      dir: this.dir,
      historyFile: (name) => this.historyFile(name),
      nameSync: (name, key) => this.nameSync(name, key),
      warn: this.warn,
    });
    // The journal made ready now, beside start-up: the first turn does not wait for it.
    this.journal.prepare();
  }

  /**
   * The histories in the folder, a slice of its entries at a time (the
   * event loop runs between slices; nothing is held but the slice):
   * regular files named as this store names them (a symlink, a folder or
   * another program's file is no history and is left alone). Leftovers of
   * writes a crash cut short go when they are provably this store's: its
   * temporary files (a history's or a meta file's name and `.tmp`), and
   * meta files whose history was removed and that name the session their
   * file name encodes.
   */
  async *walk(): AsyncGenerator<ScannedHistory[]> {
    const folder = opendirSync(this.dir, { bufferSize: WALK_SLICE });
    try {
      let slice: ScannedHistory[] = [];
      let read = 0;
      for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) {
        const found = this.entry(entry.name);
        if (found) slice.push(found);
        if (++read % WALK_SLICE !== 0) continue;
        yield slice;
        slice = [];
        await nextTick();
      }
      if (slice.length > 0) yield slice;
    } finally {
      folder.closeSync();
    }
  }

  /** One entry of the folder: a history, or nothing (a crash's leftover of this store's is removed). */
  private entry(file: string): ScannedHistory | undefined {
    const isTmp = file.endsWith(TMP_EXT);
    if (!isTmp && !file.endsWith(META_EXT) && !file.endsWith(HISTORY_EXT)) return undefined;
    // A meta file beside its history (nearly every one) needs no more look.
    if (file.endsWith(META_EXT) && lstatSync(this.historyFile(file.slice(0, -META_EXT.length)), NO_THROW)) return undefined;
    const full = this.prefix + file;
    const stats = lstatSync(full, NO_THROW);
    if (!stats?.isFile()) return undefined;
    if (isTmp) {
      const base = file.slice(0, -TMP_EXT.length);
      const name = base.endsWith(HISTORY_EXT) ? base.slice(0, -HISTORY_EXT.length) : base.endsWith(META_EXT) ? base.slice(0, -META_EXT.length) : undefined;
      if (name !== undefined && this.isOurName(name)) unlinkSync(full);
    } else if (file.endsWith(META_EXT)) {
      const name = file.slice(0, -META_EXT.length);
      const meta = this.readMetaSync(name);
      if (meta && fileNameOf(meta.key) === name) unlinkSync(full);
    } else {
      return { name: file.slice(0, -HISTORY_EXT.length), bytes: stats.size, mtimeMs: stats.mtimeMs };
    }
    return undefined;
  }

  /** Whether a file name (without extension) is one this store makes: a session key's encoding, or a shortened one (`~~` and a hash). */
  private isOurName(name: string): boolean {
    const key = keyOfFileName(name);
    if (key !== null) return parseSessionKey(key) !== null;
    return /~~[0-9a-f]{32}$/.test(name);
  }

  /** The history file's text, or undefined when there is none. */
  async read(name: string): Promise<string | undefined> {
    // A new session's first turn asks for a file that is not there: one lstat on the event loop (a microsecond or
    // two) says so, where a failed open through the thread pool is a round trip on the turn's way to the model. A
    // file that is there (or a lstat that fails) is read as before, which refuses a symlink and names any error.
    let present = true;
    try {
      present = lstatSync(this.historyFile(name), NO_THROW) !== undefined;
    } catch {}
    if (!present) return undefined;
    try {
      // Never through a symlink: a link planted in the folder is not followed out of it.
      return await readFile(this.historyFile(name), { encoding: "utf8", flag: constants.O_RDONLY | NOFOLLOW });
    } catch (error) {
      if (missing(error)) return undefined;
      throw new StorageError("read", this.historyFile(name), error);
    }
  }

  /**
   * The history file open for reading at any place (a history page read
   * from its end: history-tail.ts), never through a symlink; undefined when
   * there is none. Close it when done.
   */
  async openToRead(name: string): Promise<(TailFile & { close(): Promise<void> }) | undefined> {
    const file = this.historyFile(name);
    let handle: FileHandle;
    try {
      handle = await open(file, constants.O_RDONLY | NOFOLLOW);
    } catch (error) {
      if (missing(error)) return undefined;
      throw new StorageError("read", file, error);
    }
    try {
      const { size } = await handle.stat();
      return {
        size,
        read: async (position, length) => {
          const bytes = Buffer.alloc(length);
          let got = 0;
          try {
            while (got < length) {
              const { bytesRead } = await handle.read(bytes, got, length - got, position + got);
              if (bytesRead === 0) break;
              got += bytesRead;
            }
          } catch (error) {
            throw new StorageError("read", file, error);
          }
          return bytes.subarray(0, got);
        },
        close: () => handle.close(),
      };
    } catch (error) {
      await handle.close();
      throw new StorageError("read", file, error);
    }
  }

  async size(name: string): Promise<number | undefined> {
    try {
      return (await stat(this.historyFile(name))).size;
    } catch (error) {
      if (missing(error)) return undefined;
      throw new StorageError("read", this.historyFile(name), error);
    }
  }

  /** Cuts the history file to its first `bytes` (a write a crash cut short), durably. */
  async cut(name: string, bytes: number): Promise<void> {
    const file = this.historyFile(name);
    await this.closeHandle(name);
    try {
      await truncateHere(file, bytes);
      await this.sync(file);
    } catch (error) {
      throw new StorageError("repair", file, error);
    }
  }

  /**
   * Adds `text` at the end of the history file, and resolves once it is
   * durable: one write to the file, no sync (the file opened, when it is not
   * open already, and written on the event loop: making a file or copying
   * into the page cache costs less than a trip to the thread pool), and the
   * same bytes to the journal, whose sync is shared with every other append
   * written meanwhile. A new file needs no folder sync first: after a crash
   * the journal makes it again. On failure the file is cut back to
   * `previousBytes`, so no half-written line is left for the next append,
   * and a journal record of a write the file did not take is disowned.
   * `key` is the session's (the journal keeps it for a shortened name).
   */
  async append(name: string, text: string, previousBytes: number, key: string): Promise<void> {
    const file = this.historyFile(name);
    const data = Buffer.from(text, "utf8");
    let kept: OpenFile;
    try {
      kept = this.openFile(name);
    } catch (error) {
      throw new StorageError("write", file, error);
    }
    kept.busy++;
    const journaled = this.journal.append(name, previousBytes, data, name.includes("~~") ? key : "");
    const failures: unknown[] = [];
    try {
      for (let offset = 0; offset < data.length; ) offset += writeSync(kept.fd, data, offset);
    } catch (error) {
      failures.push(error);
    }
    const journalFailed = await journaled.then(
      () => false,
      (error: unknown) => failures.push(error) > 0,
    );
    kept.busy--;
    if (failures.length === 0) {
      // The turn's messages are on the disk: closing files used least recently need not delay its answer.
      this.closingIdle = this.closeIdle();
      return;
    }
    await this.closeHandle(name);
    await truncateHere(file, previousBytes).catch(() => {});
    if (!journalFailed) await this.disown(name);
    const error = failures[0];
    throw error instanceof StorageError ? error : new StorageError("write", file, error);
  }

  /** The journal holds a record of a write the file did not take (cut back since): the file synced as it is, and the journal told to replay nothing before now into it. */
  private async disown(name: string): Promise<void> {
    try {
      await this.syncFile(name);
      await this.journal.retire(name);
    } catch (error) {
      this.journal.refuse(error);
    }
  }

  /** Syncs a history file's data (the journal's checkpoint); nothing when it is gone. */
  async syncFile(name: string): Promise<void> {
    const kept = this.handles.get(name);
    if (kept) {
      kept.busy++;
      try {
        await datasyncFd(kept.fd);
      } finally {
        kept.busy--;
      }
      return;
    }
    let handle: FileHandle;
    try {
      handle = await open(this.historyFile(name), constants.O_WRONLY | NOFOLLOW);
    } catch (error) {
      if (missing(error)) return;
      throw error;
    }
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /** Before a history file is replaced or removed: what the journal holds of it is synced into it, and the journal told to replay none of it. */
  private async retire(name: string): Promise<void> {
    if (!this.journal.holds(name)) return;
    await this.syncFile(name);
    await this.journal.retire(name);
  }

  /** The history file open for appending (made if missing), kept open for the next append; the most recently used last. */
  private openFile(name: string): OpenFile {
    const kept = this.handles.get(name) ?? { fd: openSync(this.historyFile(name), APPEND_FLAGS, 0o600), busy: 0 };
    this.handles.delete(name);
    this.handles.set(name, kept);
    return kept;
  }

  /** Closes the least recently used files while more than MAX_OPEN are open (never one being written). */
  private async closeIdle(): Promise<void> {
    for (const [name, kept] of this.handles) {
      if (this.handles.size <= MAX_OPEN) return;
      if (kept.busy === 0) await this.closeHandle(name);
    }
  }

  private async closeHandle(name: string): Promise<void> {
    const kept = this.handles.get(name);
    if (!kept || kept.busy > 0) return;
    this.handles.delete(name);
    await closeFd(kept.fd).catch(() => {});
  }

  /** Closes the files kept open, once the journal's last records are in them, synced (a clean stop leaves no journal). */
  async closeAll(): Promise<void> {
    await this.closingIdle;
    await this.journal.close();
    for (const name of [...this.handles.keys()]) await this.closeHandle(name);
    const folder = this.folder;
    this.folder = undefined;
    await (await folder?.catch(() => undefined))?.close();
  }

  /** Replaces the history file with `text` at once: a synced temporary file renamed over it. */
  async rewrite(name: string, text: string): Promise<void> {
    const file = this.historyFile(name);
    const temp = file + TMP_EXT;
    try {
      await this.retire(name);
      // An open handle would go on appending to the file this one replaces.
      await this.closeHandle(name);
      await writeFile(temp, text, { mode: 0o600 });
      await this.sync(temp);
      await rename(temp, file);
      await this.syncDir();
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw new StorageError("write", file, error);
    }
  }

  /** Removes the session's files, durably; the size its history file had (undefined: it had none). */
  async remove(name: string): Promise<number | undefined> {
    let bytes: number | undefined;
    try {
      await this.retire(name);
      bytes = (await lstat(this.historyFile(name)).catch((error: unknown) => (missing(error) ? undefined : Promise.reject(error))))?.size;
    } catch (error) {
      throw new StorageError("remove", this.historyFile(name), error);
    }
    await this.closeHandle(name);
    for (const file of [this.historyFile(name), this.metaFile(name)]) {
      try {
        await unlink(file);
      } catch (error) {
        if (!missing(error)) throw new StorageError("remove", file, error);
      }
    }
    try {
      await this.syncDir();
    } catch (error) {
      throw new StorageError("sync", this.dir, error);
    }
    return bytes;
  }

  /** Whether the history file is still as a walk found it (same size, same time): nothing changed it since. */
  unchanged(name: string, bytes: number, mtimeMs: number): boolean {
    const stats = lstatSync(this.historyFile(name), { throwIfNoEntry: false });
    return stats?.isFile() === true && stats.size === bytes && stats.mtimeMs === mtimeMs;
  }

  /** The meta file, if it is there and readable. */
  async readMeta(name: string): Promise<SessionMeta | undefined> {
    try {
      return asMeta(JSON.parse(await readFile(this.metaFile(name), "utf8")));
    } catch {
      return undefined;
    }
  }

  readMetaSync(name: string): SessionMeta | undefined {
    try {
      return asMeta(JSON.parse(readFileSync(this.metaFile(name), "utf8")));
    } catch {
      return undefined;
    }
  }

  /** Writes the meta file (renamed into place, not synced: it is checked against the history when read). */
  async writeMeta(name: string, meta: SessionMeta): Promise<void> {
    const file = this.metaFile(name);
    try {
      await writeFile(file + TMP_EXT, `${JSON.stringify(meta, null, 2)}\n`, { mode: 0o600 });
      await rename(file + TMP_EXT, file);
    } catch (error) {
      throw new StorageError("write", file, error);
    }
  }

  /** Writes a meta file naming `key` for a shortened history name that has none (journal replay), synced; whether it wrote one. */
  private nameSync(name: string, key: string): boolean {
    const file = this.metaFile(name);
    if (lstatSync(file, { throwIfNoEntry: false })) return false;
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
    try {
      // Counts and times unknown (bytes -1 is never a file's size): what reads it reads the history for them.
      writeSync(fd, `${JSON.stringify({ key, agent: agentOfKey(key) ?? "", created_at: "", updated_at: "", count: 0, bytes: -1 }, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return true;
  }

  private async sync(file: string): Promise<void> {
    const handle = await open(file, "r+");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Makes the folder's entries (new, renamed and removed files) durable. */
  private async syncDir(): Promise<void> {
    // Windows cannot open a folder as a file; its entries are durable once the call returns.
    if (process.platform === "win32") return;
    this.folder ??= open(this.dir, "r");
    await (await this.folder).sync();
  }
}

function asMeta(value: unknown): SessionMeta | undefined {
  const meta = value as Partial<SessionMeta> | null;
  if (!meta || typeof meta.key !== "string" || !Number.isInteger(meta.count) || !Number.isInteger(meta.bytes)) return undefined;
  return {
    key: meta.key,
    agent: String(meta.agent ?? ""),
    created_at: String(meta.created_at ?? ""),
    updated_at: String(meta.updated_at ?? ""),
    count: meta.count!,
    bytes: meta.bytes!,
  };
}
