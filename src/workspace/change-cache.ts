import { type Stats, lstatSync } from "node:fs";

/**
 * How long after a change a file's times are trusted: the kernel stamps
 * times at its clock tick (and some file systems far more coarsely), so a
 * second change soon after the one seen can leave every time as it was.
 * What changed this recently is read again every time until it is older.
 */
export const SETTLED_MS = 2000;

/**
 * A folder a value was read through (between a file and the workspace's
 * root): what counts is only that it is still the same real folder, not
 * its times, which change with anything made in it. Swapped for a link (a
 * folder moved out and linked back) or for another folder, it differs.
 */
export interface Through {
  through: string;
}

/** What a value depends on: a path whose lstat must be unchanged, or a folder it was read through. */
export type Watched = string | Through;

/**
 * What a watched path itself looks like (a symlink is not followed): "-"
 * when nothing is there, undefined when it cannot be trusted (a symlink,
 * whose target can change without it; a file's change at or after
 * `before`); a folder read through by its kind and inode alone. Synchronous
 * on purpose: one lstat of a local file takes a microsecond or two, where the
 * same call through libuv's thread pool costs tens of microseconds of this
 * thread's time, and these are asked on every turn.
 */
function stamp(watched: Watched, before: number): string | undefined {
  const folder = typeof watched !== "string";
  let stat: Stats | undefined;
  try {
    stat = lstatSync(folder ? watched.through : watched, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (stat === undefined) return "-";
  if (stat.isSymbolicLink()) return undefined;
  if (folder) return stat.isDirectory() ? `d${stat.dev}:${stat.ino}` : `f${stat.dev}:${stat.ino}`;
  // Times as float milliseconds (a fraction of a microsecond apart at today's dates; no BigInts to make on every turn):
  // what changed within SETTLED_MS is never trusted, so two changes a stamp cannot tell apart are not kept as one.
  if (Math.max(stat.mtimeMs, stat.ctimeMs) >= before) return undefined;
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
}

/** The stamps of all `paths`, or undefined when one cannot be trusted. */
function fingerprint(paths: readonly Watched[], before: number): string | undefined {
  const stamps: string[] = [];
  for (const file of paths) {
    const one = stamp(file, before);
    if (one === undefined) return undefined;
    stamps.push(one);
  }
  return stamps.join("|");
}

/**
 * Values read from files (a workspace's prompt files, its skills), read
 * again only when the files they came from may have changed: what a value
 * depends on is a list of paths (the files it read, or where a missing one
 * would appear; the folders whose listing it read), and it is read again
 * when any path's lstat (inode, size, mtime, ctime) differs from when it
 * was read. A value whose paths changed while it was read, or in the
 * SETTLED_MS before, is not kept: the next ask reads again. A missing
 * path's stamp has no times; the folders a file was read through are
 * named as `Through`, by what they are and not by their times, which
 * change with anything made beside the file. So an edit is seen by the
 * next ask, as when every ask read the files, at the cost of a few lstat
 * calls instead of opens (and an error for each missing file). At most
 * `maxEntries` values are kept (past it the cache starts again).
 */
export class ChangeCache<T> {
  private readonly entries = new Map<string, { fingerprint: string; value: T }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value for `key`: the one kept while `paths(value)` are unchanged, else `read()`. */
  async get(key: string, paths: (value: T) => readonly Watched[], read: () => Promise<T>): Promise<T> {
    const known = this.entries.get(key);
    if (known && fingerprint(paths(known.value), this.now() - SETTLED_MS) === known.fingerprint) return known.value;
    const started = this.now();
    const value = await read();
    // Anything changed since `started - SETTLED_MS` may have changed during the read, or unseen just before it.
    const seen = fingerprint(paths(value), started - SETTLED_MS);
    if (seen === undefined) this.entries.delete(key);
    else {
      if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
      this.entries.set(key, { fingerprint: seen, value });
    }
    return value;
  }
}
