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
 *
 * "Runs" is asked of the kernel, not guessed from the pid alone: on Linux
 * the lock also records the owner's start time (`/proc/<pid>/stat`, in
 * clock ticks since boot) and the boot's id, so a pid reused by another
 * process, a machine rebooted since, and a zombie (a killed gateway its
 * parent has not reaped yet, which `kill(pid, 0)` still finds) all count as
 * gone. A lock naming this very process's pid is a previous run's (a
 * gateway that is PID 1 in a container is PID 1 again after a restart),
 * unless this process holds it now.
 */

export const LOCK_FILE = "picoclaw.lock";

export interface LockOwner {
  pid: number;
  host: string;
  started_at: string;
  /** Linux: the owner's start time in clock ticks since boot, and the boot's id (what tells a live owner from a reused pid). */
  start_ticks?: string;
  boot_id?: string;
}

/** Folders this process holds the lock of now (a second lock of one of them in this process is refused too). */
const held = new Set<string>();

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

/** A process as Linux's /proc tells it: its state letter and start time; "gone" when there is no such process; undefined without /proc. */
function procStat(pid: number | "self"): { state: string; startTicks: string } | "gone" | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
    // No such entry: gone, if this machine has a /proc at all.
    return procStat("self") === undefined ? undefined : "gone";
  }
  // The command name (in parentheses) may hold spaces: the fields are counted after its closing parenthesis.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return fields.length > 19 ? { state: fields[0]!, startTicks: fields[19]! } : undefined;
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return undefined;
  }
}

/** This process, as a lock records it. */
function identity(): Pick<LockOwner, "start_ticks" | "boot_id"> {
  const stat = procStat("self");
  const boot = bootId();
  return stat && stat !== "gone" && boot ? { start_ticks: stat.startTicks, boot_id: boot } : {};
}

/** Whether the lock's owner (another process than this one) still runs on this machine. */
function running(owner: LockOwner): boolean {
  const stat = procStat(owner.pid);
  if (stat === "gone") return false;
  if (stat !== undefined) {
    // A zombie (Z) or a dying process (X) is no owner.
    if (stat.state === "Z" || stat.state === "X") return false;
    // Recorded by a gateway that knew its own start: the same process only if the same boot and the same start.
    if (owner.start_ticks !== undefined && owner.boot_id !== undefined) return owner.boot_id === bootId() && owner.start_ticks === stat.startTicks;
    return true;
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<LockOwner>;
    if (Number.isInteger(value.pid) && typeof value.host === "string") {
      return {
        pid: value.pid!,
        host: value.host,
        started_at: String(value.started_at ?? ""),
        ...(typeof value.start_ticks === "string" && typeof value.boot_id === "string" ? { start_ticks: value.start_ticks, boot_id: value.boot_id } : {}),
      };
    }
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
  return { owner, running: owner.host === hostname() ? owner.pid !== process.pid && running(owner) : undefined };
}

function describe(owner: LockOwner): string {
  return `process ${owner.pid} on ${owner.host}${owner.started_at ? `, since ${owner.started_at}` : ""}`;
}

/**
 * Takes the folder's lock for this process, or throws SessionDirBusyError;
 * when the disk is full or read-only, the system's error as it is (the
 * caller names the folder), with no lock file left half-written. `now`
 * stamps the lock's `started_at`.
 */
export function lockDir(dir: string, now: () => number = Date.now): DirLock {
  const file = path.join(dir, LOCK_FILE);
  const me: LockOwner = { pid: process.pid, host: hostname(), started_at: new Date(now()).toISOString(), ...identity() };
  if (held.has(path.resolve(dir))) {
    throw new SessionDirBusyError(dir, me, `this process holds ${file} already (one session store per folder)`);
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o644);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A full or read-only disk is no owner's doing: the caller names the folder and says so.
      if (code === "ENOSPC" || code === "EDQUOT" || code === "EROFS") throw error;
      if (code !== "EEXIST") throw new SessionDirBusyError(dir, undefined, `cannot create ${file} (${messageOf(error)})`);
      const owner = readOwner(file);
      if (owner && owner.host !== me.host) {
        throw new SessionDirBusyError(
          dir,
          owner,
          `${describe(owner)} holds ${file}. Another machine's process cannot be checked from here: stop it, or delete the file if it no longer runs, or give this gateway another session.dir`,
        );
      }
      // This pid, and not held here: a previous run's lock (PID 1 again in a restarted container).
      if (owner && owner.pid !== me.pid && running(owner)) {
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
    } catch (error) {
      // No lock half-written (a full disk): the folder is left as it was.
      closeSync(fd);
      unlinkSync(file);
      throw error;
    }
    closeSync(fd);
    const key = path.resolve(dir);
    held.add(key);
    return {
      release: () => {
        held.delete(key);
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
