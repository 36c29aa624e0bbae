import { parseSessionKey } from "../key.js";
import { fileNameOf, keyOfFileName } from "./file-names.js";
import type { ScannedHistory, SessionFiles } from "./session-files.js";

/** Files changed this close together are ordered by their meta files' times. */
const CLOSE_MS = 50;

export interface FoundSession {
  key: string;
  /** Its file name (without extension). */
  name: string;
  /** When it last changed (ms since the epoch). */
  updatedAt: number;
  /** Its history file's size, and time, when the census saw it (what tells whether it changed since). */
  bytes: number;
  mtimeMs: number;
}

export interface Census {
  /** Sessions on disk, and their history files' bytes together. */
  count: number;
  bytes: number;
  /** The most recently changed sessions (at most `newest` asked for), oldest first. */
  newest: FoundSession[];
  /** The least recently changed sessions (at most `oldest` asked for), oldest first. */
  oldest: FoundSession[];
  /** Of the names `watch` asked about: the size each had when the census saw it (absent: not seen). */
  seen: Map<string, number>;
}

/**
 * Counts the sessions in a session folder in one walk of it (a slice of
 * entries at a time: the event loop runs between slices), holding no more
 * than the few sessions asked for: the `newest` changed last and the
 * `oldest` changed least recently, by their files' times, or their meta
 * files' for files changed within `CLOSE_MS` of another (file times come
 * from a clock that may tick every few milliseconds). A file whose key
 * cannot be told (a shortened name without its meta file) or that decodes
 * to no session key is another program's, or a crash's: left alone, with a
 * warning, and not counted.
 */
export async function census(
  files: SessionFiles,
  warn: (message: string) => void,
  want: { newest: number; oldest: number; watch: { has(name: string): boolean } },
): Promise<Census> {
  const result: Census = { count: 0, bytes: 0, newest: [], oldest: [], seen: new Map() };
  const newest = new Best(want.newest, (a, b) => b.mtimeMs - a.mtimeMs);
  const oldest = new Best(want.oldest, (a, b) => a.mtimeMs - b.mtimeMs);
  for await (const slice of files.walk()) {
    for (const file of slice) {
      if (want.watch.has(file.name)) result.seen.set(file.name, file.bytes);
      const key = keyOf(files, file, warn);
      if (key === null) continue;
      result.count++;
      result.bytes += file.bytes;
      newest.offer(file);
      oldest.offer(file);
    }
  }
  result.newest = ordered(files, newest.take());
  result.oldest = ordered(files, oldest.take());
  return result;
}

/**
 * The `size` first of what it is offered, by `order`, holding at most
 * twice that: once it has been cut back, only what beats the last one kept
 * gets in (so few of the files walked outlive their slice).
 */
class Best {
  private list: ScannedHistory[] = [];
  private bar: ScannedHistory | undefined;

  constructor(
    private readonly size: number,
    private readonly order: (a: ScannedHistory, b: ScannedHistory) => number,
  ) {}

  offer(file: ScannedHistory): void {
    if (this.size <= 0 || (this.bar && this.order(file, this.bar) >= 0)) return;
    this.list.push(file);
    if (this.list.length < 2 * this.size) return;
    this.list = this.take();
    this.bar = this.list.at(-1);
  }

  take(): ScannedHistory[] {
    return this.list.sort(this.order).slice(0, this.size);
  }
}

/** The session a history file holds, or null when it holds none of this gateway's (warned) or a subagent's. */
function keyOf(files: SessionFiles, file: ScannedHistory, warn: (message: string) => void): string | null {
  const decoded = keyOfFileName(file.name);
  let key = decoded;
  if (key === null) {
    const meta = files.readMetaSync(file.name);
    key = meta && fileNameOf(meta.key) === file.name ? meta.key : null;
  }
  if (key === null) {
    warn(`${files.historyFile(file.name)}: cannot tell which session it holds (its name is shortened and its meta file does not say); left alone`);
    return null;
  }
  // A name that decodes to no session key is another program's file: not listed, not evicted, not touched.
  const parts = parseSessionKey(key);
  if (parts === null) {
    warn(`${files.historyFile(file.name)}: not a session file of this gateway (its name is no session key); left alone`);
    return null;
  }
  // A subagent's or one message's session is never written: a file of one is not this gateway's either.
  return parts.subagents.length > 0 || parts.chatId.startsWith("!") ? null : key;
}

/**
 * The sessions of `found`, each with its key and time, oldest change first:
 * in the order of the files' times, and within a run of files changed less
 * than `CLOSE_MS` apart (too close for a file system's clock to tell) in
 * the order of their meta files' times. A meta file's time only ever orders
 * the files of its run: it comes from the gateway's clock, which need not
 * agree with the file system's.
 */
function ordered(files: SessionFiles, found: ScannedHistory[]): FoundSession[] {
  const sorted = [...found].sort((a, b) => a.mtimeMs - b.mtimeMs);
  const sessions: FoundSession[] = [];
  let run: { session: FoundSession; metaAt: number }[] = [];
  const endRun = () => {
    if (run.length > 1) run.sort((a, b) => (Number.isNaN(a.metaAt) || Number.isNaN(b.metaAt) ? 0 : a.metaAt - b.metaAt));
    for (const { session } of run) sessions.push(session);
    run = [];
  };
  sorted.forEach((file, i) => {
    const close = (j: number) => j >= 0 && j < sorted.length && Math.abs(sorted[j]!.mtimeMs - file.mtimeMs) < CLOSE_MS;
    if (!close(i - 1)) endRun();
    const decoded = keyOfFileName(file.name);
    const tooClose = close(i - 1) || close(i + 1);
    const meta = decoded === null || tooClose ? files.readMetaSync(file.name) : undefined;
    const key = decoded ?? meta?.key;
    // A shortened name's meta file gone since the walk: the session is gone too.
    if (key === undefined) return;
    const metaAt = tooClose ? Date.parse(meta?.updated_at ?? "") : Number.NaN;
    const updatedAt = Number.isNaN(metaAt) ? file.mtimeMs : metaAt;
    run.push({ session: { key, name: file.name, updatedAt: Math.round(updatedAt), bytes: file.bytes, mtimeMs: file.mtimeMs }, metaAt });
  });
  endRun();
  return sessions;
}
