import { randomBytes } from "node:crypto";
import { constants, existsSync } from "node:fs";
import { type FileHandle, link, mkdir, open, readdir, readlink, realpath, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { PicoclawError } from "../errors.js";
import { AllowedPaths, within } from "./allowed-paths.js";

/**
 * An agent's workspace: a confined file system, opened once, that every
 * file tool's path goes through (PicoClaw's `os.Root`, stricter). Relative
 * paths are inside the workspace; with `restrict` on (the default) nothing
 * outside it is read or written but what `allow_read_paths` /
 * `allow_write_paths` name (and, for reads, everything with
 * `allow_read_outside_workspace`).
 *
 * No check-then-use window: a path is judged by what was actually opened.
 * A read opens the file (following symlinks) and then asks the kernel where
 * the handle points (`/proc/self/fd/N`); a write walks to the parent folder
 * a component at a time, holding each folder open and reaching the next
 * through the held one, then creates, renames or appends relative to that
 * held folder, so a folder swapped for a symlink meanwhile changes nothing.
 * A write replaces a file atomically (a temporary file synced, renamed over
 * it, the folder synced): a crash leaves the old file or the new one.
 * Only regular files are read or written (never a device, a FIFO or a
 * socket). Without `/proc` (not Linux) the same checks run on resolved
 * paths, with the window that leaves; README says so.
 */

/** What a path was refused or failed for: the message names the path and, when it is outside, the root. */
export class WorkspaceError extends PicoclawError {
  constructor(
    message: string,
    /** The path (or a folder on it) does not exist. */
    readonly missing = false,
  ) {
    super(message, { code: "invalid_request", fault: "user" });
  }
}

export interface WorkspacePolicy {
  /** The workspace folder (made when missing). */
  root: string;
  /** restrict_to_workspace: nothing outside the roots is read or written. */
  restrict: boolean;
  /** allow_read_outside_workspace: with `restrict`, reads anywhere (writes stay confined). */
  readOutside: boolean;
  readPaths: readonly RegExp[];
  writePaths: readonly RegExp[];
}

/** A file open for reading, checked: its handle, size and where it really is. */
export interface OpenedFile {
  handle: FileHandle;
  size: number;
  /** The path as asked for (absolute). */
  path: string;
  /** Where the handle points, symlinks resolved. */
  realPath: string;
}

export interface DirEntry {
  name: string;
  dir: boolean;
}

const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

export class Workspace {
  private readonly readAllowed: AllowedPaths;
  private readonly writeAllowed: AllowedPaths;

  private constructor(
    /** The workspace folder, symlinks resolved. */
    readonly root: string,
    private readonly policy: WorkspacePolicy,
  ) {
    this.readAllowed = new AllowedPaths(policy.readPaths);
    this.writeAllowed = new AllowedPaths(policy.writePaths);
  }

  /** Opens the workspace, making its folder (and the folders above it) when missing. */
  static async open(policy: WorkspacePolicy): Promise<Workspace> {
    await mkdir(policy.root, { recursive: true, mode: 0o700 });
    return new Workspace(await realpath(policy.root), policy);
  }

  /** The absolute path a tool's argument names: relative paths are inside the workspace. */
  locate(input: string): string {
    if (typeof input !== "string" || input.trim() === "") throw new WorkspaceError("path is required");
    if (input.includes("\0")) throw new WorkspaceError("path must not hold a NUL character");
    return path.resolve(this.root, input);
  }

  /** What a tool shows the model of a path: relative inside the workspace, absolute outside. */
  display(absolute: string): string {
    return within(absolute, this.root) ? path.relative(this.root, absolute) || "." : absolute;
  }

  private mayRead(absolute: string): boolean {
    const { restrict, readOutside } = this.policy;
    return !restrict || readOutside || within(absolute, this.root) || this.readAllowed.matches(absolute);
  }

  private mayWrite(absolute: string): boolean {
    return !this.policy.restrict || within(absolute, this.root) || this.writeAllowed.matches(absolute);
  }

  private outside(absolute: string, what: "read" | "write"): WorkspaceError {
    const allow = what === "read" ? "tools.allow_read_paths" : "tools.allow_write_paths";
    return new WorkspaceError(`access denied: ${absolute} is outside the workspace (${this.root}) and not in ${allow}`);
  }

  private escaped(absolute: string, real: string, what: "read" | "write"): WorkspaceError {
    const allow = what === "read" ? "tools.allow_read_paths" : "tools.allow_write_paths";
    return new WorkspaceError(`access denied: ${absolute} resolves through a symlink to ${real}, outside the workspace (${this.root}) and not in ${allow}`);
  }

  /**
   * Opens a path that `use` may read or write, judged as asked for and then
   * by where the opened handle points; the caller closes the handle (it is
   * closed here when the path is refused).
   */
  private async openChecked(
    input: string,
    flags: number,
    use: "read" | "write",
    failure: string,
  ): Promise<{ handle: FileHandle; absolute: string; real: string }> {
    const absolute = this.locate(input);
    const allowed = (p: string) => (use === "read" ? this.mayRead(p) : this.mayWrite(p));
    if (!allowed(absolute)) throw this.outside(absolute, use);
    let handle: FileHandle;
    try {
      handle = await open(absolute, flags);
    } catch (error) {
      throw this.failed(failure, absolute, error);
    }
    try {
      const real = await whereIs(handle, absolute);
      if (!allowed(real)) throw this.escaped(absolute, real, use);
      return { handle, absolute, real };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Opens a regular file for reading; the caller closes `handle`. */
  /**
   * The start of a text file (its first `maxBytes`, a character cut in two
   * left out) and its whole size; undefined when there is no such file. What
   * the workspace refuses (a symlink out, a directory) throws as openFile does.
   */
  async readStart(input: string, maxBytes: number): Promise<{ text: string; size: number } | undefined> {
    let opened: OpenedFile;
    try {
      opened = await this.openFile(input);
    } catch (error) {
      if (error instanceof WorkspaceError && error.missing) return undefined;
      throw error;
    }
    try {
      const buffer = Buffer.alloc(Math.min(opened.size, maxBytes));
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, 0);
      return { text: new TextDecoder().decode(buffer.subarray(0, bytesRead), { stream: true }), size: opened.size };
    } finally {
      await opened.handle.close();
    }
  }

  async openFile(input: string): Promise<OpenedFile> {
    // O_NONBLOCK: opening a FIFO returns at once (and is refused below) instead of waiting for a writer.
    const { handle, absolute, real } = await this.openChecked(input, O_RDONLY | O_NONBLOCK | O_NOCTTY, "read", "open");
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw new WorkspaceError(`${this.display(absolute)} is a directory; list_dir lists it`);
      if (!stat.isFile()) throw new WorkspaceError(`${this.display(absolute)} is not a regular file (a device, FIFO or socket); it is not read`);
      return { handle, size: stat.size, path: absolute, realPath: real };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Whether restrict_to_workspace confines this workspace. */
  get restricted(): boolean {
    return this.policy.restrict;
  }

  /** Whether tools.allow_read_paths names the path (exec lets a command name such paths, as PicoClaw does). */
  inReadPaths(absolute: string): boolean {
    return this.readAllowed.matches(absolute);
  }

  /**
   * Opens a folder for a process to work in (exec's `cwd`): with `restrict`,
   * inside the workspace or tools.allow_write_paths, judged by where the
   * handle points. The caller closes `handle`; while it is open, the folder
   * is `/proc/<pid>/fd/<fd>` whatever is renamed around it.
   */
  async openFolder(input: string): Promise<{ handle: FileHandle; path: string; realPath: string }> {
    const { handle, absolute, real } = await this.openChecked(input, O_RDONLY | O_DIRECTORY, "write", "open directory");
    return { handle, path: absolute, realPath: real };
  }

  /** The entries of a folder, by name. */
  async list(input: string): Promise<DirEntry[]> {
    const { handle, real } = await this.openChecked(input, O_RDONLY | O_DIRECTORY, "read", "read directory");
    try {
      const entries = await readdir(PROC_FD ? `/proc/self/fd/${handle.fd}` : real, { withFileTypes: true });
      return entries.map((entry) => ({ name: entry.name, dir: entry.isDirectory() })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } finally {
      await handle.close();
    }
  }

  /**
   * Writes a whole file atomically: `create` refuses an existing one,
   * `replace` replaces it. Missing folders on the way are made (inside the
   * roots only). Resolves with the file's absolute path.
   */
  async write(input: string, data: string | Uint8Array, mode: "create" | "replace"): Promise<string> {
    const { absolute, folder, name } = await this.parentOf(input);
    try {
      const temp = `.${name.slice(0, 100)}.${randomBytes(6).toString("hex")}.tmp`;
      const tempPath = folder.inside(temp);
      const handle = await open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        if (mode === "create") {
          // link() never replaces: an existing file (or a link made meanwhile) is EEXIST, race-free.
          await link(tempPath, folder.inside(name));
          await unlink(tempPath);
        } else {
          await rename(tempPath, folder.inside(name));
        }
      } catch (error) {
        await unlink(tempPath).catch(() => {});
        if (code(error) === "EEXIST") throw new WorkspaceError(`file: ${this.display(absolute)} already exists. Set overwrite=true to replace.`);
        if (code(error) === "EISDIR") throw new WorkspaceError(`${this.display(absolute)} is a directory`);
        throw this.failed("write", absolute, error);
      }
      await folder.handle.sync().catch(() => {});
      return absolute;
    } catch (error) {
      if (error instanceof WorkspaceError) throw error;
      throw this.failed("write", absolute, error);
    } finally {
      await folder.handle.close();
    }
  }

  /** Appends to a file (made when missing); resolves with its absolute path and its size after. */
  async append(input: string, data: string | Uint8Array): Promise<{ path: string; size: number }> {
    const { absolute, folder, name } = await this.parentOf(input);
    let handle: FileHandle | undefined;
    try {
      try {
        handle = await open(folder.inside(name), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
      } catch (error) {
        if (code(error) !== "ELOOP") throw error;
        // A symlink: appended to only when it points at an existing file the roots allow.
        handle = await open(folder.inside(name), O_WRONLY | O_APPEND | O_NONBLOCK);
        const real = await whereIs(handle, absolute);
        if (!this.mayWrite(real)) throw this.escaped(absolute, real, "write");
      }
      const stat = await handle.stat();
      if (!stat.isFile()) throw new WorkspaceError(`${this.display(absolute)} is not a regular file; nothing was appended`);
      await handle.appendFile(data);
      await handle.sync();
      return { path: absolute, size: (await handle.stat()).size };
    } catch (error) {
      if (error instanceof WorkspaceError) throw error;
      throw this.failed("append to", absolute, error);
    } finally {
      await handle?.close();
      await folder.handle.close();
    }
  }

  /**
   * The folder a written path goes in, held open, with the file's name: the
   * path checked as asked for, then walked a component at a time from `/`
   * through held folders (made when missing, inside the roots only), and the
   * folder reached checked for where it really is.
   */
  private async parentOf(input: string): Promise<{ absolute: string; folder: HeldFolder; name: string }> {
    const absolute = this.locate(input);
    const name = path.basename(absolute);
    if (absolute === path.parse(absolute).root || name === "") throw new WorkspaceError(`${absolute} is not a file's path`);
    if (!this.mayWrite(absolute)) throw this.outside(absolute, "write");
    const parent = path.dirname(absolute);
    let folder = await HeldFolder.open(path.parse(parent).root, path.parse(parent).root);
    try {
      for (const part of path
        .relative(path.parse(parent).root, parent)
        .split(path.sep)
        .filter((p) => p !== "")) {
        folder = await folder.enter(part, (candidate) => this.mayWrite(candidate));
      }
      const real = await whereIs(folder.handle, parent);
      if (!this.mayWrite(path.join(real, name))) throw this.escaped(absolute, path.join(real, name), "write");
      return { absolute, folder, name };
    } catch (error) {
      await folder.handle.close();
      if (error instanceof WorkspaceError) throw error;
      throw this.failed("reach the folder of", absolute, error);
    }
  }

  private failed(what: string, absolute: string, error: unknown): WorkspaceError {
    const shown = this.display(absolute);
    switch (code(error)) {
      case "ENOENT":
        return new WorkspaceError(`failed to ${what} ${shown}: no such file or directory`, true);
      case "ENOTDIR":
        return new WorkspaceError(`failed to ${what} ${shown}: a part of the path is not a directory`);
      case "EISDIR":
        return new WorkspaceError(`failed to ${what} ${shown}: it is a directory`);
      case "EACCES":
      case "EPERM":
        return new WorkspaceError(`failed to ${what} ${shown}: permission denied`);
      case "ELOOP":
        return new WorkspaceError(`failed to ${what} ${shown}: too many symlinks`);
      case "ENOSPC":
        return new WorkspaceError(`failed to ${what} ${shown}: no space left on the device`);
      default:
        return new WorkspaceError(`failed to ${what} ${shown}: ${(error as Error).message ?? String(error)}`);
    }
  }
}

/** A folder held open; paths inside it are reached through the handle, not by name from the top. */
class HeldFolder {
  private constructor(
    readonly handle: FileHandle,
    /** Its path as asked for (for messages). */
    private readonly asked: string,
  ) {}

  static async open(folder: string, asked: string): Promise<HeldFolder> {
    return new HeldFolder(await open(folder, O_RDONLY | O_DIRECTORY), asked);
  }

  /** A path inside the held folder that no rename of the folders above can redirect. */
  inside(name: string): string {
    return PROC_FD ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.asked, name);
  }

  /** The sub-folder `part` held (this one released once it is), made when missing where `mayMake` allows; on failure this one stays held. */
  async enter(part: string, mayMake: (candidate: string) => boolean): Promise<HeldFolder> {
    const next = this.inside(part);
    let handle: FileHandle;
    try {
      handle = await open(next, O_RDONLY | O_DIRECTORY);
    } catch (error) {
      if (code(error) !== "ENOENT") throw error;
      const where = path.join(await whereIs(this.handle, this.asked), part);
      if (!mayMake(where)) throw new WorkspaceError(`access denied: ${where} would be made outside the workspace and tools.allow_write_paths`);
      try {
        await mkdir(next, { mode: 0o700 });
      } catch (made) {
        if (code(made) !== "EEXIST") throw made;
      }
      handle = await open(next, O_RDONLY | O_DIRECTORY);
    }
    await this.handle.close();
    return new HeldFolder(handle, path.join(this.asked, part));
  }
}

/** Where an open handle really is (symlinks resolved): the kernel's answer on Linux, else the resolved path. */
async function whereIs(handle: FileHandle, asked: string): Promise<string> {
  if (PROC_FD) return readlink(`/proc/self/fd/${handle.fd}`);
  return realpath(asked);
}
