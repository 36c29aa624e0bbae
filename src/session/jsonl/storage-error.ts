import { PicoclawError, messageOf } from "../../errors.js";

/** A session file could not be read or written (a full disk, permissions): the change did not happen. */
export class StorageError extends PicoclawError {
  constructor(what: string, file: string, cause: unknown) {
    super(`could not ${what} ${file}: ${messageOf(cause)}`, { code: "storage_failed", fault: "system", cause });
  }
}

/** What the operating system said of a failed file operation (`ENOSPC`), if it said anything. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

/**
 * The session folder cannot be used at start-up (the disk is full, it is
 * read-only, permissions): start-up stops with exit code 2, naming the
 * folder and what to do.
 */
export class SessionDirUnusableError extends PicoclawError {
  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    const code = errnoOf(cause);
    const why =
      code === "ENOSPC" || code === "EDQUOT"
        ? "the disk it is on is full. Free some space there, or give session.dir a folder on another disk"
        : code === "EROFS"
          ? "its file system is read-only. Give session.dir a writable folder"
          : code === "EACCES" || code === "EPERM"
            ? "this user may not write there. Fix its permissions, or give session.dir another folder"
            : "give session.dir another folder, or fix this one";
    super(`the session folder ${dir} cannot be used (${messageOf(cause)}): ${why}`, { code: "sessions_unusable", fault: "config", cause });
  }
}
