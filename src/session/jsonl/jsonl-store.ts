import { Semaphore } from "async-mutex";
import { ConfigError, PicoclawError, messageOf } from "../../errors.js";
import type { ChatMessage } from "../../models/message.js";
import { type Timer, realTimer } from "../../signals.js";
import type { HistoryPage, HistoryStore, SessionInfo } from "../history.js";
import { type HistoryTail, readHistoryTail } from "./history-tail.js";
import { isTransientKey } from "../key.js";
import { KeyQueue } from "../key-queue.js";
import { type AppendOutcome, DEFAULT_HISTORY_LIMITS, SessionCache, type SessionCacheOptions } from "../session-cache.js";
import { type DirLock, lockDir } from "./dir-lock.js";
import { fileNameOf } from "./file-names.js";
import { type FileState, countFromMeta, readHistoryFile, writeChange, writeSessionMeta } from "./history-file.js";
import { SessionFiles } from "./session-files.js";
import { SessionDirUnusableError, errnoOf } from "./storage-error.js";
import { type Listed, StoredIndex, listedName } from "./stored-index.js";
import type { FoundSession } from "./stored-sessions.js";

export interface JsonlHistoryOptions extends SessionCacheOptions {
  /** The session folder (made if missing); this store locks it for its process. */
  dir: string;
  /** Sessions kept on disk at most; past it the one changed least recently (and not in a turn) is removed. */
  maxStored?: number;
  /** Bytes of history files kept on disk at most, all sessions together; past it the sessions changed least recently are removed. */
  maxStoredBytes?: number;
  /** Reads of sessions not in memory (history pages of evicted sessions) at once at most (default 4); more wait. */
  maxDiskReads?: number;
  /** Problems that cost nothing but a line of history (a torn line, a repaired call), one sentence each. */
  warn?: (message: string) => void;
  /** Times the writing of meta files and the census of the folder (default: real timers). */
  timer?: Timer;
}

/** Meta files are written this long after their session changed, all at once: never in the way of a turn. */
export const META_DELAY_MS = 2_000;

export const DEFAULT_MAX_STORED = 100_000;
export const DEFAULT_MAX_STORED_BYTES = 2 * 1024 * 1024 * 1024;
export const DEFAULT_DISK_READS = 4;

/** What the store knows of a session it read or wrote (sessions in memory, and those whose meta file is due). */
interface Stored extends FileState {
  /** Its key, as a flat string of its own. */
  key: string;
  updatedAt: number;
  /** Messages its history holds, once known. */
  count: number | undefined;
  createdAt: number | undefined;
}

/** An entry with every field in place from the start (one shape for all, its fields inside the object). */
function storedEntry(key: string, updatedAt: number): Stored {
  return { key, updatedAt, count: undefined, createdAt: undefined, fileBytes: undefined, fileLines: undefined, dirty: false };
}

/**
 * Histories kept on disk, PicoClaw's way: one append-only JSONL file per
 * root session, one message a line, and a small meta file beside it
 * (session-files.ts). Subagents' sessions are never written: they live in
 * memory and end with their turn.
 *
 * A SessionCache with the store's bounds is the cache of the sessions used
 * recently; an evicted session is read back from its file when a turn
 * holds it. Each change is one write, durable before it resolves (an
 * append, whose sync the journal shares with every append written
 * meanwhile, or a whole rewrite when the file has grown past twice the
 * session's limits or no longer matches memory); if it fails, memory
 * forgets the session and the next turn reads the file again, so the two
 * never differ. Changes to one session happen one at a time, in order.
 *
 * Opening reads no session: it takes the lock and replays what a crash
 * left in the journal. What is known of the sessions on disk (how many,
 * the newest for the list, the oldest for the budget) is StoredIndex's,
 * bounded whatever their number.
 */
export class JsonlHistoryStore implements HistoryStore {
  private readonly cache: SessionCache;
  /** Sessions this store read or wrote and still needs to know of (in memory, or a meta file due). */
  private readonly stored = new Map<string, Stored>();
  private readonly index: StoredIndex;
  private readonly queue = new KeyQueue();
  /** Held sessions known to have no file yet (so a turn's append need not look again). */
  private readonly absent = new Set<string>();
  /** Sessions whose meta file is to be written. */
  private readonly metaDue = new Set<string>();
  private cancelMetaTimer: (() => void) | undefined;
  /** Meta files being written, one after another. */
  private metaWrites: Promise<void> = Promise.resolve();
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly warn: (message: string) => void;
  private readonly now: () => number;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** What bounds reads of sessions not in memory: a file each, parsed whole, so their number at once is the memory they take. */
  private readonly diskReads: Semaphore;

  private constructor(
    private readonly opts: JsonlHistoryOptions,
    private readonly lock: DirLock,
    private readonly files: SessionFiles,
  ) {
    this.cache = new SessionCache(opts);
    this.diskReads = new Semaphore(opts.maxDiskReads ?? DEFAULT_DISK_READS);
    this.maxMessages = opts.maxMessages ?? DEFAULT_HISTORY_LIMITS.maxMessages;
    this.maxBytes = opts.maxBytes ?? DEFAULT_HISTORY_LIMITS.maxBytes;
    this.warn = opts.warn ?? (() => {});
    this.now = opts.now ?? Date.now;
    this.index = new StoredIndex({
      files,
      warn: this.warn,
      timer: opts.timer ?? realTimer,
      maxStored: opts.maxStored ?? DEFAULT_MAX_STORED,
      maxStoredBytes: opts.maxStoredBytes ?? DEFAULT_MAX_STORED_BYTES,
      evict: (found, why) => this.evict(found, why),
    });
  }

  /**
   * Opens (and locks) a session folder, and puts back what a crash left in
   * its journal: throws SessionDirBusyError when another live process holds
   * it, ConfigError when it cannot be made, SessionDirUnusableError when it
   * cannot be written (a full disk). Reads no session.
   */
  static open(opts: JsonlHistoryOptions): JsonlHistoryStore {
    let files: SessionFiles;
    try {
      files = new SessionFiles(opts.dir, opts.warn);
    } catch (error) {
      if (full(error)) throw new SessionDirUnusableError(opts.dir, error);
      throw new ConfigError([`session.dir: cannot use ${opts.dir} (${messageOf(error)})`]);
    }
    let lock: DirLock;
    try {
      lock = lockDir(opts.dir, opts.now);
    } catch (error) {
      throw unusable(opts.dir, error);
    }
    try {
      files.recover();
      return new JsonlHistoryStore(opts, lock, files);
    } catch (error) {
      lock.release();
      throw unusable(opts.dir, error);
    }
  }

  async hold(sessionKey: string): Promise<() => void> {
    const release = await this.cache.hold(sessionKey);
    if (isTransientKey(sessionKey)) return release;
    try {
      await this.serial(sessionKey, () => this.load(sessionKey));
    } catch (error) {
      release();
      throw error;
    }
    // A session found to have no file has none until this store writes one (it owns the folder).
    if (!this.cache.has(sessionKey)) this.absent.add(sessionKey);
    return () => {
      this.absent.delete(sessionKey);
      release();
    };
  }

  async get(sessionKey: string): Promise<ChatMessage[]> {
    return this.cache.get(sessionKey);
  }

  async page(sessionKey: string, limit: number): Promise<HistoryPage> {
    if (isTransientKey(sessionKey) || this.cache.has(sessionKey)) return this.cache.page(sessionKey, limit);
    // Reading is not using: an evicted session is read from its file and stays out of memory,
    // at most max_disk_reads of them at once, each from the file's end (its last exchanges, not the file).
    return this.diskReads.runExclusive(() =>
      this.serial(sessionKey, async () => {
        if (this.cache.has(sessionKey)) return this.cache.page(sessionKey, limit);
        return this.pageFromFile(sessionKey, Math.max(1, limit));
      }),
    );
  }

  async append(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.append(sessionKey, messages);
    if (messages.length === 0) return;
    return this.serial(sessionKey, () => this.commit(sessionKey, (key) => this.cache.add(key, messages), messages));
  }

  async replace(sessionKey: string, messages: readonly ChatMessage[]): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.replace(sessionKey, messages);
    return this.serial(sessionKey, () =>
      this.commit(sessionKey, (key) => {
        this.cache.clear(sessionKey);
        return this.cache.add(key, messages);
      }),
    );
  }

  async clear(sessionKey: string): Promise<void> {
    if (isTransientKey(sessionKey)) return this.cache.clear(sessionKey);
    return this.serial(sessionKey, async () => {
      this.ensureOpen();
      const name = fileNameOf(sessionKey);
      const before = await this.files.remove(name);
      this.cache.clear(sessionKey);
      this.stored.delete(sessionKey);
      if (before !== undefined) this.index.removed(sessionKey, name, before);
    });
  }

  /** Sessions below another are never written (subagents', one message's): they are in memory only. */
  async clearBelow(sessionKey: string): Promise<void> {
    this.cache.clearBelow(sessionKey);
  }

  async list(limit: number): Promise<SessionInfo[]> {
    const infos: SessionInfo[] = [];
    for (const entry of await this.index.newest(limit)) {
      const messages = await this.countOf(entry);
      if (messages > 0) infos.push({ key: entry.key, messages, updatedAt: entry.updatedAt });
    }
    return infos;
  }

  /** Every root session is written to its file; subagents' and one message's sessions live in memory only. */
  isDurable(sessionKey: string): boolean {
    return !isTransientKey(sessionKey);
  }

  keys(): string[] {
    return this.cache.keys();
  }

  get size(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.bytes;
  }

  /** Waits for the writes under way, writes the meta files due, checkpoints the journal, then lets go of the folder. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    // Removals the folder's budget asked for still happen (no turn runs now).
    await this.index.close();
    this.closed = true;
    this.writeMetas();
    await this.metaWrites;
    await this.queue.drain();
    await this.files.closeAll();
    this.lock.release();
  }

  /** Runs `work` after everything asked before it for the same session (whether that failed or not). */
  private serial<T>(sessionKey: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(sessionKey, work);
  }

  private ensureOpen(): void {
    if (this.closed) throw new Error("the session store is closed");
  }

  /** Puts the session's history in memory, from its file (if it has one), unless it is there already. */
  private async load(sessionKey: string): Promise<void> {
    if (this.cache.has(sessionKey) || this.absent.has(sessionKey)) return;
    const read = await this.read(sessionKey);
    if (!read) return;
    const entry = this.stored.get(sessionKey)!;
    const outcome = this.cache.restore(entry.key, read.messages, entry.updatedAt);
    entry.count = this.cache.count(sessionKey);
    if (read.repaired || outcome.fitted) entry.dirty = true;
  }

  /** The session's messages as its file holds them, repaired; what the store knows of the file follows. */
  private async read(sessionKey: string): Promise<{ messages: ChatMessage[]; repaired: boolean } | undefined> {
    this.ensureOpen();
    const name = fileNameOf(sessionKey);
    const read = await readHistoryFile(this.files, name, this.warn);
    if (!read) {
      this.stored.delete(sessionKey);
      return undefined;
    }
    let entry = this.stored.get(sessionKey);
    if (!entry) {
      entry = storedEntry(ownCopy(sessionKey), 0);
      this.stored.set(entry.key, entry);
    }
    entry.fileBytes = read.bytes;
    entry.fileLines = read.lines;
    return read;
  }

  /**
   * Applies `change` to the session in memory and writes the outcome: the
   * `appended` lines at the end of its file, or the whole history anew.
   * Resolves once it is on disk; the meta file follows. `change` gets the
   * key string the store keeps (its entry's), for memory to keep the same.
   */
  private async commit(sessionKey: string, change: (key: string) => AppendOutcome, appended?: readonly ChatMessage[]): Promise<void> {
    this.ensureOpen();
    // Held while it is loaded and changed, so that another session's change cannot evict it in between.
    const release = await this.cache.hold(sessionKey);
    let outcome: AppendOutcome;
    let kept: ChatMessage[];
    let key: string;
    try {
      await this.load(sessionKey);
      key = this.stored.get(sessionKey)?.key ?? ownCopy(sessionKey);
      outcome = change(key);
      kept = this.cache.get(sessionKey);
    } finally {
      release();
    }
    const name = fileNameOf(sessionKey);
    const known = this.stored.get(sessionKey);
    const entry = known ?? { ...storedEntry(key, 0), fileBytes: 0, fileLines: 0 };
    // The file's size before this change; undefined when there is no file (a session read from none, never written).
    const before = known?.fileBytes;
    try {
      if (kept.length === 0) {
        const gone = await this.files.remove(name);
        this.stored.delete(sessionKey);
        if (gone !== undefined) this.index.removed(sessionKey, name, gone);
        return;
      }
      await writeChange(this.files, name, entry.key, entry, kept, outcome.fitted ? undefined : appended, {
        maxBytes: this.maxBytes,
        maxMessages: this.maxMessages,
      });
    } catch (error) {
      // Memory must not hold what the file does not: the next turn reads the file again.
      this.cache.clear(sessionKey);
      this.stored.delete(sessionKey);
      throw error;
    }
    this.absent.delete(sessionKey);
    entry.count = kept.length;
    entry.updatedAt = this.now();
    // A file this store just made was created now (no older meta file to ask).
    if (before === undefined) entry.createdAt ??= entry.updatedAt;
    this.stored.set(entry.key, entry);
    this.metaDue.add(sessionKey);
    this.cancelMetaTimer ??= (this.opts.timer ?? realTimer)(META_DELAY_MS, () => this.writeMetas());
    this.index.changed(entry.key, name, before, entry.fileBytes!, entry.updatedAt, entry.count);
    this.forgetIdle();
  }

  /**
   * Writes the meta files that are due, each after what is under way for
   * its session, and one at a time: a burst of them never fills the thread
   * pool that turns' appends wait for.
   */
  private writeMetas(): void {
    this.cancelMetaTimer?.();
    this.cancelMetaTimer = undefined;
    const due = [...this.metaDue];
    this.metaDue.clear();
    this.metaWrites = this.metaWrites.then(async () => {
      for (const key of due) await this.serial(key, () => this.writeMeta(key));
    });
  }

  private async writeMeta(sessionKey: string): Promise<void> {
    const entry = this.stored.get(sessionKey);
    if (!entry) return;
    try {
      const facts = { updatedAt: entry.updatedAt, count: entry.count ?? 0, bytes: entry.fileBytes ?? 0 };
      entry.createdAt = await writeSessionMeta(
        this.files,
        sessionKey,
        fileNameOf(entry.key),
        entry.createdAt === undefined ? facts : { ...facts, createdAt: entry.createdAt },
      );
    } catch (error) {
      this.warn(messageOf(error));
    }
  }

  /** Messages a listed session holds: from memory, from the list, from its meta file when that still matches the history, or by reading it. */
  private async countOf(entry: Listed): Promise<number> {
    const { key } = entry;
    if (this.cache.has(key)) return this.cache.count(key);
    if (entry.count !== undefined) return entry.count;
    const meta = await countFromMeta(this.files, key, listedName(entry));
    const count = meta ? meta.count : await this.serial(key, async () => this.bounded((await this.read(key))?.messages ?? []).length);
    this.index.noteCount(key, count);
    return count;
  }

  /** What the session keeps of `messages` (its limits applied), without touching memory's cache. */
  private bounded(messages: readonly ChatMessage[]): ChatMessage[] {
    return this.withinLimits(messages).messages;
  }

  /** The same, and whether the limits left anything out (an older exchange, or the last one cut to fit). */
  private withinLimits(messages: readonly ChatMessage[]): { messages: ChatMessage[]; trimmed: boolean } {
    const scratch = new SessionCache({ ...this.opts, maxSessions: 1, maxTotalBytes: Number.POSITIVE_INFINITY });
    const outcome = scratch.restore("", messages, 0);
    return { messages: scratch.get(""), trimmed: outcome.dropped > 0 || outcome.fitted };
  }

  /**
   * The last `limit` messages of a session not in memory, read from its
   * file's end (history-tail.ts: the bytes of its last exchanges, not the
   * whole file), and how many it holds: known when the read reached back
   * far enough to tell, or from what the store knows (its count, or a meta
   * file that still matches the file); else the file is read whole once
   * and its count kept.
   */
  private async pageFromFile(sessionKey: string, limit: number): Promise<HistoryPage> {
    this.ensureOpen();
    const name = fileNameOf(sessionKey);
    const file = await this.files.openToRead(name);
    if (!file) {
      this.stored.delete(sessionKey);
      return { messages: [], total: 0 };
    }
    let tail: HistoryTail;
    try {
      tail = await readHistoryTail(file, limit, { fileName: this.files.historyFile(name), bound: (messages) => this.withinLimits(messages) });
    } finally {
      await file.close();
    }
    const messages = tail.messages.slice(-limit);
    const entry = this.stored.get(sessionKey);
    if (tail.whole) {
      if (entry) entry.count = tail.messages.length;
      return { messages, total: tail.messages.length };
    }
    const known = entry && (entry.count ?? (await countFromMeta(this.files, sessionKey, fileNameOf(entry.key)))?.count);
    if (known !== undefined) {
      if (entry) entry.count = known;
      return { messages, total: Math.max(known, messages.length) };
    }
    const kept = this.bounded((await this.read(sessionKey))?.messages ?? []);
    const read = this.stored.get(sessionKey);
    if (read) read.count = kept.length;
    return { messages: kept.slice(-limit), total: kept.length };
  }

  /** Removes a session for the folder's budget, unless its file changed since the census found it or a turn holds it. */
  private evict(found: FoundSession, why: string): Promise<boolean> {
    return this.serial(found.key, async () => {
      if (this.closed || this.cache.isHeld(found.key) || !this.files.unchanged(found.name, found.bytes, found.mtimeMs)) return false;
      try {
        await this.files.remove(found.name);
      } catch (error) {
        this.warn(messageOf(error));
        return false;
      }
      this.cache.clear(found.key);
      this.stored.delete(found.key);
      this.warn(`removed the stored session ${found.key}: ${why}`);
      return true;
    });
  }

  /** Forgets what it knows of sessions no longer in memory (once that is most of what it knows): their next use reads their file. */
  private forgetIdle(): void {
    if (this.stored.size <= 2 * this.cache.size + 64) return;
    for (const key of [...this.stored.keys()]) {
      if (!this.cache.has(key) && !this.metaDue.has(key) && !this.cache.isHeld(key)) this.stored.delete(key);
    }
  }
}

/** A flat copy of a string (one built by concatenation is a tree of its pieces, several times its size). */
function ownCopy(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}

/** A full disk (or a quota, a read-only file system): the folder cannot be written. */
function full(error: unknown): boolean {
  return ["ENOSPC", "EDQUOT", "EROFS"].includes(errnoOf(error) ?? "");
}

/** What opening a folder failed with, as start-up tells it: our own errors as they are, the system's naming the folder. */
function unusable(dir: string, error: unknown): unknown {
  return !(error instanceof PicoclawError) && errnoOf(error) !== undefined ? new SessionDirUnusableError(dir, error) : error;
}
