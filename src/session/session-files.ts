import { mkdirSync, readFileSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { type FileHandle, open, readFile, rename, stat, truncate, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { PicoclawError, messageOf } from "../errors.js";

/**
 * The files of a session folder, and the only code that touches them:
 * `<name>.jsonl` (the history, one message a line, appended to) and
 * `<name>.meta.json` (key, agent, times, message count), where `<name>` is
 * the key's file name (file-names.ts). What must survive a crash is synced
 * before a write resolves: an append (one write, then fdatasync), a rewrite
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

export class SessionFiles {
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
   * The histories in the folder, found at start-up. Leftovers of writes a
   * crash cut short go: temporary files, and meta files whose history was
   * removed.
   */
  scan(): ScannedHistory[] {
    const names = readdirSync(this.dir);
    const histories: ScannedHistory[] = [];
    const present = new Set(names);
    for (const file of names) {
      const full = path.join(this.dir, file);
      if (file.endsWith(TMP_EXT) || (file.endsWith(META_EXT) && !present.has(file.slice(0, -META_EXT.length) + HISTORY_EXT))) {
        unlinkSync(full);
      } else if (file.endsWith(HISTORY_EXT)) {
        const stats = statSync(full, { throwIfNoEntry: false });
        if (stats?.isFile()) histories.push({ name: file.slice(0, -HISTORY_EXT.length), bytes: stats.size, mtimeMs: stats.mtimeMs });
      }
    }
    return histories;
  }

  /** The history file's text, or undefined when there is none. */
  async read(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.historyFile(name), "utf8");
    } catch (error) {
      if (missing(error)) return undefined;
      throw new StorageError("read", this.historyFile(name), error);
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
    try {
      await truncate(file, bytes);
      await this.sync(file);
    } catch (error) {
      throw new StorageError("repair", file, error);
    }
  }

  /**
   * Adds `text` at the end of the history file in one write, then syncs it
   * (and the folder, for a new file). On failure the file is cut back to
   * `previousBytes`, so no half-written line is left for the next append.
   */
  async append(name: string, text: string, previousBytes: number): Promise<void> {
    const file = this.historyFile(name);
    const data = Buffer.from(text, "utf8");
    let handle: FileHandle | undefined;
    try {
      handle = await open(file, "a", 0o600);
      for (let offset = 0; offset < data.length; ) offset += (await handle.write(data, offset)).bytesWritten;
      await handle.datasync();
      if (previousBytes === 0) await this.syncDir();
    } catch (error) {
      await truncate(file, previousBytes).catch(() => {});
      throw new StorageError("write", file, error);
    } finally {
      await handle?.close();
    }
  }

  /** Replaces the history file with `text` at once: a synced temporary file renamed over it. */
  async rewrite(name: string, text: string): Promise<void> {
    const file = this.historyFile(name);
    const temp = file + TMP_EXT;
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
    const handle = await open(this.dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
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
