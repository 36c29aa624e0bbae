import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { PicoclawError, messageOf } from "../../errors.js";

/**
 * One process owns a session folder: it holds `picoclaw.lock` there, a
 * small JSON file naming it (`pid`, `host`, `started_at`). A second process
 * finds the file and refuses, naming the folder and the owner; a lock whose
 * owner no longer runs on this machine (killed, crashed, power lost) is
 * taken over.
 */

export const LOCK_FILE = "picoclaw.lock";

export interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
}

/** Another live process owns the session folder (start-up stops with exit code 2). */
export class SessionDirBusyError extends PicoclawError {
  constructor(
    readonly dir: string,
    readonly owner: LockOwner | undefined,
    detail: string,
  ) {
    super(`the session folder ${dir} is in use: ${detail}`, { code: "sessions_locked", fault: "config" });
  }
}

export interface DirLock {
  /** Removes the lock file (if it is still ours). */
  release(): void;
}

/** Whether a process with this id runs on this machine. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<LockOwner>;
    if (Number.isInteger(value.pid) && typeof value.host === "string") return { pid: value.pid!, host: value.host, started_at: String(value.started_at ?? "") };
  } catch {
    // unreadable or torn: the writer died while writing it
  }
  return undefined;
}

/** Who holds the folder's lock, if anyone does, and whether that process still runs here (`picoclaw status`). */
export function lockHolder(dir: string): { owner: LockOwner; running: boolean | undefined } | undefined {
  const owner = readOwner(path.join(dir, LOCK_FILE));
  if (!owner) return undefined;
  // Another machine's process cannot be checked from here.
  return { owner, running: owner.host === hostname() ? running(owner.pid) : undefined };
}

function describe(owner: LockOwner): string {
  return `process ${owner.pid} on ${owner.host}${owner.started_at ? `, since ${owner.started_at}` : ""}`;
}

/**
 * Takes the folder's lock for this process, or throws SessionDirBusyError.
 * `now` stamps the lock's `started_at`.
 */
export function lockDir(dir: string, now: () => number = Date.now): DirLock {
  const file = path.join(dir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, host: hostname(), started_at: new Date(now()).toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new SessionDirBusyError(dir, undefined, `cannot create ${file} (${messageOf(error)})`);
      }
      const owner = readOwner(file);
      if (owner && owner.host !== me.host) {
        throw new SessionDirBusyError(
          dir,
          owner,
          `${describe(owner)} holds ${file}. Another machine's process cannot be checked from here: stop it, or delete the file if it no longer runs, or give this gateway another session.dir`,
        );
      }
      if (owner && (owner.pid === me.pid || running(owner.pid))) {
        throw new SessionDirBusyError(
          dir,
          owner,
          `another gateway (${describe(owner)}) owns it. Stop that gateway, or give this one another session.dir (if no gateway runs as ${owner.pid}, delete ${file})`,
        );
      }
      // Its owner is gone (or died writing it): take it over.
      try {
        unlinkSync(file);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== "ENOENT") {
          throw new SessionDirBusyError(dir, owner, `cannot remove the stale lock ${file} (${messageOf(unlinkError)})`);
        }
      }
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    return {
      release: () => {
        if (readOwner(file)?.pid !== me.pid) return;
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      },
    };
  }
  throw new SessionDirBusyError(dir, readOwner(file), `another process took ${file} at the same moment`);
}
