import { messageOf } from "../../errors.js";
import type { Timer } from "../../signals.js";
import { fileNameOf } from "./file-names.js";
import type { SessionFiles } from "./session-files.js";
import { type FoundSession, census } from "./stored-sessions.js";

/** Sessions the list can show at most (GET /v1/sessions takes up to 1000). */
export const LIST_MAX = 1000;
/** Sessions a census notes as the next to remove when the folder is over its budget. */
export const EVICT_BATCH = 1024;
/** How long after the first change the folder is counted (when nothing asked for it sooner): never in the way of start-up or a first turn. */
export const CENSUS_DELAY_MS = 5_000;

/** The file name of a listed session. */
export const listedName = (entry: Listed): string => entry.name ?? fileNameOf(entry.key);

/** A session's entry, its file's name kept only when it is not the key's own. */
function listed(key: string, name: string, updatedAt: number, count: number | undefined, seq: number): Listed {
  return name === fileNameOf(key) ? { key, updatedAt, count, seq } : { key, name, updatedAt, count, seq };
}

/** A session as the list shows it. */
export interface Listed {
  key: string;
  /** Its file's name, when it is not the key's own (`fileNameOf`): one string less for almost every session. */
  name?: string;
  updatedAt: number;
  /** Its messages, once known. */
  count: number | undefined;
  /** The order of this process's changes (1, 2...); ≤ 0 for a session only the census found, in its order. */
  seq: number;
}

export interface StoredIndexOptions {
  files: SessionFiles;
  warn: (message: string) => void;
  timer: Timer;
  /** Sessions, and bytes of their history files, the folder keeps at most. */
  maxStored: number;
  maxStoredBytes: number;
  /** Removes a session a census found, unless it changed since or a turn holds it; whether it did. */
  evict(found: FoundSession, why: string): Promise<boolean>;
}

/** A session file changed while a census walked the folder: its size before the first such change, and now (undefined: none). */
interface Change {
  before: number | undefined;
  now: number | undefined;
}

/**
 * What the JSONL store knows of the sessions on disk, in memory bounded by
 * a constant, not by how many there are: start-up reads none of them.
 *
 * - Counts: how many sessions, and how many bytes their history files
 *   hold, from a census (stored-sessions.ts: one walk of the folder, in
 *   slices, in the background) taken CENSUS_DELAY_MS after the first
 *   change, or at once when something needs it; then kept by every change.
 * - The list: the LIST_MAX sessions changed last, newest at the end, from
 *   the census and this process's changes; a list that needs more than it
 *   is sure of takes a new census.
 * - The budget: past `maxStored` sessions or `maxStoredBytes` bytes, the
 *   sessions changed least recently are removed (never the one just
 *   changed, nor one a turn holds), from the EVICT_BATCH a census noted,
 *   and a new census when they run out.
 */
export class StoredIndex {
  private totals: { count: number; bytes: number } | undefined;
  /** Before the first census: sessions and bytes this process added (the folder holds at least that). */
  private added = { count: 0, bytes: 0 };
  private readonly recent = new Map<string, Listed>();
  /** How many of the newest sessions on disk `recent` is sure to hold ("all": every one). */
  private covered: number | "all" = 0;
  private candidates: FoundSession[] = [];
  /** Changes while a census runs, by file name. */
  private changes: Map<string, Change> | undefined;
  /** The census or removals under way; the next one waits for it. */
  private work: Promise<void> = Promise.resolve();
  private censusDue: Promise<void> | undefined;
  private enforcing = false;
  private cancelTimer: (() => void) | undefined;
  private seq = 0;
  /** The session changed last (never removed for the budget by its own change). */
  private last: string | undefined;
  private closed = false;

  constructor(private readonly opts: StoredIndexOptions) {}

  /** A session's history file was written: `before` its size until now (undefined: it is new), `after` its size now. */
  changed(key: string, name: string, before: number | undefined, after: number, updatedAt: number, count: number): void {
    const known = this.recent.get(key);
    this.recent.delete(key);
    this.recent.set(key, listed(key, name, updatedAt, count, ++this.seq));
    if (!known && this.covered !== "all") this.covered++;
    this.trimRecent();
    this.last = key;
    this.count(name, before, after);
    if (this.totals) {
      if (this.over()) this.enforce();
      return;
    }
    // A census under way or due counts this change too, and the budget is applied after it.
    if (this.changes || this.censusDue) return;
    // This process alone has put more there than the budget: no need to wait to count.
    if (this.added.count > this.opts.maxStored || this.added.bytes > this.opts.maxStoredBytes) void this.census();
    else this.cancelTimer ??= this.opts.timer(CENSUS_DELAY_MS, () => void this.census());
  }

  /** A session's files were removed; `before` the size its history file had. */
  removed(key: string, name: string, before: number): void {
    if (this.recent.delete(key) && this.covered !== "all") this.covered = Math.max(0, this.covered - 1);
    this.count(name, before, undefined);
  }

  /** Messages of a listed session, once counted. */
  noteCount(key: string, count: number): void {
    const entry = this.recent.get(key);
    if (entry) entry.count = count;
  }

  /** The `limit` sessions changed last (at most LIST_MAX), newest first. */
  async newest(limit: number): Promise<Listed[]> {
    const wanted = Math.min(limit, LIST_MAX);
    if (this.covered !== "all" && this.covered < wanted) await this.census();
    const listed = [...this.recent.values()].reverse();
    return listed.slice(0, wanted);
  }

  /** Waits for the census and removals under way or asked for (but for one only timed), then takes no more. */
  async close(): Promise<void> {
    this.cancelTimer?.();
    for (let work = this.work; ; work = this.work) {
      await work;
      if (work === this.work) break;
    }
    this.closed = true;
  }

  private count(name: string, before: number | undefined, after: number | undefined): void {
    const change = this.changes?.get(name);
    if (this.changes) this.changes.set(name, { before: change ? change.before : before, now: after });
    const sessions = (after === undefined ? 0 : 1) - (before === undefined ? 0 : 1);
    const bytes = (after ?? 0) - (before ?? 0);
    const into = this.totals ?? this.added;
    into.count += sessions;
    into.bytes += bytes;
  }

  private over(): boolean {
    return this.totals !== undefined && (this.totals.count > this.opts.maxStored || this.totals.bytes > this.opts.maxStoredBytes);
  }

  private trimRecent(): void {
    for (const key of this.recent.keys()) {
      if (this.recent.size <= LIST_MAX) return;
      this.recent.delete(key);
      if (this.covered === "all") this.covered = LIST_MAX;
    }
  }

  /** Runs `task` after the work under way (a failure is a warning). */
  private queue(task: () => Promise<void>): Promise<void> {
    this.work = this.work
      .then(task)
      .catch((error: unknown) => this.opts.warn(`counting the session folder ${this.opts.files.dir} failed: ${messageOf(error)}`));
    return this.work;
  }

  /** A census (one at a time: a census asked for while one waits is that one), then the budget applied. */
  private census(): Promise<void> {
    this.cancelTimer?.();
    if (this.closed) return Promise.resolve();
    this.censusDue ??= this.queue(async () => {
      try {
        await this.takeCensus();
      } finally {
        this.censusDue = undefined;
      }
      this.enforce();
    });
    return this.censusDue;
  }

  private async takeCensus(): Promise<void> {
    const changes = new Map<string, Change>();
    this.changes = changes;
    let found: Awaited<ReturnType<typeof census>>;
    try {
      found = await census(this.opts.files, this.opts.warn, { newest: LIST_MAX, oldest: EVICT_BATCH, watch: changes });
    } finally {
      this.changes = undefined;
    }
    // What changed while the walk went on: the walk saw a file as it was before, or as it is now, or not at all.
    let { count, bytes } = found;
    for (const [name, change] of changes) {
      const seen = found.seen.get(name);
      const counted = found.seen.has(name) ? seen : change.before;
      count += (change.now === undefined ? 0 : 1) - (counted === undefined ? 0 : 1);
      bytes += (change.now ?? 0) - (counted ?? 0);
    }
    this.totals = { count, bytes };
    const gone = (session: FoundSession) => changes.has(session.name) && changes.get(session.name)!.now === undefined;
    const merged = new Map<string, Listed>();
    // The census's sessions in the census's order (oldest change first), ranked below this process's changes (seq ≤ 0).
    found.newest.forEach((session, i) => {
      if (gone(session) || this.recent.has(session.key)) return;
      merged.set(session.key, listed(session.key, session.name, session.updatedAt, undefined, i - found.newest.length + 1));
    });
    // This process's changes are newer than anything the census found.
    for (const entry of this.recent.values()) merged.set(entry.key, entry);
    const sorted = [...merged.values()].sort((a, b) => a.seq - b.seq);
    this.recent.clear();
    for (const entry of sorted.slice(-LIST_MAX)) this.recent.set(entry.key, entry);
    this.covered = count <= this.recent.size ? "all" : this.recent.size - found.newest.filter(gone).length;
    // The least recently changed first; this process's changes after every other, in their order.
    // (found.oldest is in the census's order already: a stable sort keeps it among equals.)
    const rank = (session: FoundSession) => Math.max(0, this.recent.get(session.key)?.seq ?? 0);
    this.candidates = found.oldest.filter((session) => !gone(session)).sort((a, b) => rank(a) - rank(b));
  }

  /** Removes the sessions changed least recently while the folder is over its budget (one run at a time). */
  private enforce(): void {
    if (this.enforcing || !this.over()) return;
    this.enforcing = true;
    void this.queue(async () => {
      try {
        await this.removeOldest();
      } finally {
        this.enforcing = false;
      }
    });
  }

  private async removeOldest(): Promise<void> {
    let censusTaken = false;
    let removedAny = false;
    while (!this.closed && this.over()) {
      if (this.candidates.length === 0) {
        // A census whose every candidate stayed (changed since, or in a turn) is not taken again until the next change.
        if (censusTaken && !removedAny) return;
        await this.takeCensus();
        censusTaken = true;
        removedAny = false;
        if (!this.over() || this.candidates.length === 0) return;
      }
      const found = this.candidates.shift()!;
      if (found.key === this.last) continue;
      const why =
        this.totals!.count > this.opts.maxStored
          ? `session.max_stored keeps ${this.opts.maxStored} sessions, and it was changed least recently`
          : `session.max_stored_bytes keeps ${this.opts.maxStoredBytes} bytes of sessions, and it was changed least recently`;
      if (!(await this.opts.evict(found, why))) continue;
      removedAny = true;
      this.removed(found.key, found.name, found.bytes);
    }
  }
}
