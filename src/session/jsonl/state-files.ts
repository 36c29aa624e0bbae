import { type FileHandle, mkdir, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileNameOf } from "./file-names.js";
import { StorageError } from "./session-files.js";

/**
 * The files of durable feature state in a session folder, and the only code
 * that touches them: `state/<namespace>.json`, one per namespace, rewritten
 * whole on each change (a temporary file synced, renamed over the old one,
 * the folder synced), so a crash leaves the old file or the new one, never
 * half of either. The folder's lock (dir-lock.ts) covers them.
 */
export class StateFiles {
  private readonly dir: string;
  private folder: Promise<FileHandle> | undefined;
  private made = false;

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
    const temp = `${file}.tmp`;
    try {
      if (!this.made) await this.make();
      await writeFile(temp, text, { mode: 0o600 });
      const handle = await open(temp, "r+");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
      // Windows cannot open a folder as a file; its entries are durable once the call returns.
      if (process.platform !== "win32") {
        this.folder ??= open(this.dir, "r");
        await (await this.folder).sync();
      }
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw new StorageError("write", file, error);
    }
  }

  /** The folder, and its entry in the session folder made durable. */
  private async make(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    if (process.platform !== "win32") {
      const parent = await open(path.dirname(this.dir), "r");
      try {
        await parent.sync();
      } finally {
        await parent.close();
      }
    }
    this.made = true;
  }

  async close(): Promise<void> {
    const folder = this.folder;
    this.folder = undefined;
    if (folder) await (await folder).close();
  }
}
