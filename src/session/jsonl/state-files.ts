import { type FileHandle, mkdir, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileNameOf } from "./file-names.js";
import { StorageError } from "./storage-error.js";

/**
 * The files of durable feature state in a session folder, and the only code
 * that touches them: `state/<namespace>.json`, one per namespace, rewritten
 * whole on each change (a temporary file synced, renamed over the old one,
 * the folder synced), so a crash leaves the old file or the new one, never
 * half of either. The folder's lock (dir-lock.ts) covers them.
 */

/** A write that failed; `replaced` says whether the file had been renamed into place (it holds the new text, which may not survive a crash). */
export class StateWriteError extends StorageError {
  constructor(
    file: string,
    cause: unknown,
    readonly replaced: boolean,
  ) {
    super(replaced ? "sync the folder after replacing" : "write", file, cause);
  }
}

export class StateFiles {
  private readonly dir: string;
  private made = false;
  private closed = false;

  /** The folder is made with the first write: a session folder no feature keeps state in has none. */
  constructor(sessionDir: string) {
    this.dir = path.join(sessionDir, "state");
  }

  fileOf(namespace: string): string {
    return path.join(this.dir, `${fileNameOf(namespace)}.json`);
  }

  /** The namespace's file, or undefined when it has none. */
  async read(namespace: string): Promise<string | undefined> {
    const file = this.fileOf(namespace);
    try {
      return await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new StorageError("read", file, error);
    }
  }

  /** Replaces the namespace's file with `text`; durable once it resolves. */
  async write(namespace: string, text: string): Promise<void> {
    const file = this.fileOf(namespace);
    if (this.closed) throw new StateWriteError(file, new Error("the session store is closed"), false);
    const temp = `${file}.tmp`;
    let replaced = false;
    try {
      if (!this.made) await this.make();
      await writeFile(temp, text, { mode: 0o600 });
      await syncFile(temp);
      await rename(temp, file);
      replaced = true;
      await syncFolder(this.dir);
    } catch (error) {
      if (!replaced) await unlink(temp).catch(() => {});
      throw new StateWriteError(file, error, replaced);
    }
  }

  /** No write after this (the folder's lock goes next). */
  close(): void {
    this.closed = true;
  }

  /** The folder, and its entry in the session folder made durable. */
  private async make(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await syncFolder(path.dirname(this.dir));
    this.made = true;
  }
}

async function syncFile(file: string): Promise<void> {
  const handle: FileHandle = await open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a folder's entries (new and renamed files) durable. Windows cannot open a folder as a file; its entries are durable once the call returns. */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
