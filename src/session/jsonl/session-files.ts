import { constants, lstatSync, mkdirSync, readFileSync, readdirSync, unlinkSync } from "node:fs";
import { type FileHandle, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { PicoclawError, messageOf } from "../../errors.js";
import { parseSessionKey } from "../key.js";
import { fileNameOf, keyOfFileName } from "./file-names.js";
import type { TailFile } from "./history-tail.js";

/**
 * The files of a session folder, and the only code that touches them:
 * `<name>.jsonl` (the history, one message a line, appended to) and
 * `<name>.meta.json` (key, agent, times, message count), where `<name>` is
 * the key's file name (file-names.ts). What must survive a crash is synced
 * before a write resolves: an append (one O_DSYNC write to a file kept
 * open, MAX_OPEN at most), a rewrite
 * (a temporary file synced, renamed over the old one, the folder synced), a
 * removal (the folder synced). Meta files are a convenience: written
 * without a sync, checked against the history's size when read.
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

/** A session file could not be read or written (a full disk, permissions): the change did not happen. */
export class StorageError extends PicoclawError {
  constructor(what: string, file: string, cause: unknown) {
    super(`could not ${what} ${file}: ${messageOf(cause)}`, { code: "storage_failed", fault: "system", cause });
  }
}

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

export interface ScannedHistory {
  name: string;
  bytes: number;
  mtimeMs: number;
}

interface OpenFile {
  handle: FileHandle;
  /** Appends writing to it now. */
  busy: number;
}

/** History files kept open for appending at once (more only while that many are being written). */
export const MAX_OPEN = 64;
/** O_DSYNC where the platform has it (not Windows): a write returns once it is on the disk. */
const DSYNC = constants.O_DSYNC as number | undefined;
/** O_NOFOLLOW where the platform has it: a history file that is a symlink is refused (ELOOP), never followed. */
const NOFOLLOW = (constants.O_NOFOLLOW as number | undefined) ?? 0;
const APPEND_FLAGS = constants.O_APPEND | constants.O_CREAT | constants.O_WRONLY | (DSYNC ?? 0) | NOFOLLOW;

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

  /** The folder (made if missing, readable by this user only). */
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  historyFile(name: string): string {
    return path.join(this.dir, name + HISTORY_EXT);
  }

  private metaFile(name: string): string {
    return path.join(this.dir, name + META_EXT);
  }

  /**
   * The histories in the folder, found at start-up: regular files named as
   * this store names them (a symlink, a folder or another program's file is
   * no history and is left alone). Leftovers of writes a crash cut short go
   * when they are provably this store's: its temporary files (a history's or
   * a meta file's name and `.tmp`), and meta files whose history was removed
   * and that name the session their file name encodes.
   */
  scan(): ScannedHistory[] {
    const names = readdirSync(this.dir);
    const histories: ScannedHistory[] = [];
    const present = new Set(names);
    for (const file of names) {
      const full = path.join(this.dir, file);
      const stats = lstatSync(full, { throwIfNoEntry: false });
      if (!stats?.isFile()) continue;
      if (file.endsWith(TMP_EXT)) {
        const base = file.slice(0, -TMP_EXT.length);
        const name = base.endsWith(HISTORY_EXT) ? base.slice(0, -HISTORY_EXT.length) : base.endsWith(META_EXT) ? base.slice(0, -META_EXT.length) : undefined;
        if (name !== undefined && this.isOurName(name)) unlinkSync(full);
      } else if (file.endsWith(META_EXT)) {
        const name = file.slice(0, -META_EXT.length);
        const meta = present.has(name + HISTORY_EXT) ? undefined : this.readMetaSync(name);
        if (meta && fileNameOf(meta.key) === name) unlinkSync(full);
      } else if (file.endsWith(HISTORY_EXT)) {
        histories.push({ name: file.slice(0, -HISTORY_EXT.length), bytes: stats.size, mtimeMs: stats.mtimeMs });
      }
    }
    return histories;
  }

  /** Whether a file name (without extension) is one this store makes: a session key's encoding, or a shortened one (`~~` and a hash). */
  private isOurName(name: string): boolean {
    const key = keyOfFileName(name);
    if (key !== null) return parseSessionKey(key) !== null;
    return /~~[0-9a-f]{32}$/.test(name);
  }

  /** The history file's text, or undefined when there is none. */
  async read(name: string): Promise<string | undefined> {
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
   * Adds `text` at the end of the history file in one write that returns
   * once it is on the disk (the file is open with O_DSYNC: the write and
   * its sync are one call), and syncs the folder for a new file. On failure
   * the file is cut back to `previousBytes`, so no half-written line is
   * left for the next append.
   */
  async append(name: string, text: string, previousBytes: number): Promise<void> {
    const file = this.historyFile(name);
    const data = Buffer.from(text, "utf8");
    let kept: OpenFile | undefined;
    try {
      kept = await this.openFile(name);
      kept.busy++;
      for (let offset = 0; offset < data.length; ) offset += (await kept.handle.write(data, offset)).bytesWritten;
      if (DSYNC === undefined) await kept.handle.datasync();
      if (previousBytes === 0) await this.syncDir();
    } catch (error) {
      if (kept) kept.busy--;
      await this.closeHandle(name);
      await truncateHere(file, previousBytes).catch(() => {});
      throw new StorageError("write", file, error);
    }
    kept.busy--;
    // The turn's messages are on the disk: closing files used least recently need not delay its answer.
    this.closingIdle = this.closeIdle();
  }

  /** The history file open for appending, kept open for the next append. */
  private async openFile(name: string): Promise<OpenFile> {
    let kept = this.handles.get(name);
    if (kept) {
      this.handles.delete(name);
    } else {
      kept = { handle: await open(this.historyFile(name), APPEND_FLAGS, 0o600), busy: 0 };
      // Another append may have opened it meanwhile: keep one.
      const other = this.handles.get(name);
      if (other) {
        await kept.handle.close();
        kept = other;
        this.handles.delete(name);
      }
    }
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
    await kept.handle.close().catch(() => {});
  }

  /** Closes the files kept open. */
  async closeAll(): Promise<void> {
    await this.closingIdle;
    for (const name of [...this.handles.keys()]) await this.closeHandle(name);
    const folder = this.folder;
    this.folder = undefined;
    await (await folder?.catch(() => undefined))?.close();
  }

  /** Replaces the history file with `text` at once: a synced temporary file renamed over it. */
  async rewrite(name: string, text: string): Promise<void> {
    const file = this.historyFile(name);
    const temp = file + TMP_EXT;
    // An open handle would go on appending to the file this one replaces.
    await this.closeHandle(name);
    try {
      await writeFile(temp, text, { mode: 0o600 });
      await this.sync(temp);
      await rename(temp, file);
      await this.syncDir();
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw new StorageError("write", file, error);
    }
  }

  /** Removes the session's files, durably. */
  async remove(name: string): Promise<void> {
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
