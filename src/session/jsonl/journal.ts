import { constants } from "node:fs";
import { type FileHandle, open, unlink } from "node:fs/promises";
import path from "node:path";
import { messageOf } from "../../errors.js";
import { RecordKind, encodeRecord } from "./journal-records.js";
import { StorageError } from "./storage-error.js";

/**
 * The session folder's journal: what makes a turn durable with one
 * fdatasync, shared with every turn of any session written meanwhile
 * (group commit).
 *
 * A turn's lines are appended to its session file with a plain write (no
 * sync), and the same bytes, with the file's name and the offset they went
 * to, to the journal. Records wait in a queue; one write puts all that are
 * waiting at the end of the journal and makes them durable (the journal is
 * open with O_DSYNC: the write and its fdatasync are one call), then each
 * append resolves. Records that arrive while a sync runs are
 * written and synced together by the next one, so no append waits for
 * more than the sync under way and its own. A new session file needs no
 * folder sync before its turn is answered: after a crash, its records
 * make it again (journal-replay.ts).
 *
 * The journal is two segment files used in turn, `picoclaw.journal.0` and
 * `.1`. Once the one being written holds SEGMENT_BYTES, the next one takes
 * over, and the full one is checkpointed in the background: every session
 * file it has records of is synced, the folder is synced (for new files),
 * and the segment is deleted. Closing the journal checkpoints both. So
 * after a clean stop there is no journal, and after a crash at most two
 * segments' worth is replayed.
 *
 * Before a session file is replaced (rewritten whole) or removed, its data
 * is synced and a Retire record is made durable (`retire`): no record
 * before it is replayed into the new file, or brings back a removed one.
 */

/** The segment files, used in turn (sequence number modulo 2). */
export const JOURNAL_FILES = ["picoclaw.journal.0", "picoclaw.journal.1"] as const;
/** A segment this full is checkpointed (bytes: what a crash leaves to replay, at most twice this). */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

const NOFOLLOW = (constants.O_NOFOLLOW as number | undefined) ?? 0;
/** O_DSYNC where the platform has it (not Windows): a batch's write returns once it is on the disk, one call for the write and its sync. */
const DSYNC = constants.O_DSYNC as number | undefined;
const SEGMENT_FLAGS = constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY | NOFOLLOW | (DSYNC ?? 0);

/** What the journal needs of the session files. */
export interface JournalFiles {
  /** Syncs a session file's data; nothing when it is gone. */
  syncFile(name: string): Promise<void>;
  /** Syncs the folder's entries (new, renamed and removed files). */
  syncDir(): Promise<void>;
  warn(message: string): void;
}

interface Segment {
  seq: number;
  file: string;
  handle: FileHandle | undefined;
  /** Bytes written and synced. */
  bytes: number;
  /** Made ready (opened, its head written, listed in the folder): once, before its first batch. */
  opening: Promise<FileHandle> | undefined;
  /** Session files it has records of. */
  names: Set<string>;
}

interface Waiting {
  record: Buffer;
  /** The session file the record is of (an append's), to sync at the checkpoint. */
  name: string | undefined;
  resolve(): void;
  reject(error: unknown): void;
}

export class Journal {
  private current: Segment;
  /** The full segment, until its checkpoint is done. */
  private older: Segment | undefined;
  private queue: Waiting[] = [];
  private flushing: Promise<void> | undefined;
  private checkpointing: Promise<void> | undefined;
  /** Why the journal cannot be written any more (a failed write could not be undone): every append fails. */
  private broken: unknown;
  private closed = false;
  private written = 0;

  constructor(
    private readonly dir: string,
    private readonly files: JournalFiles,
  ) {
    this.current = this.segment(0);
  }

  /** Batches written and synced so far, each one write and one sync (for tests and metrics). */
  get syncs(): number {
    return this.written;
  }

  /** Whether a record of this session file may be replayed after a crash (it is in a segment not yet checkpointed). */
  holds(name: string): boolean {
    return this.current.names.has(name) || this.older?.names.has(name) === true;
  }

  /** Resolves once a record of `payload`, appended to the session file `name` at `offset`, is durable. */
  append(name: string, offset: number, payload: Buffer, key = ""): Promise<void> {
    return this.add(encodeRecord(RecordKind.Append, name, offset, payload, key), name);
  }

  /** Resolves once no record before now is replayed into the session file `name` after a crash. */
  retire(name: string): Promise<void> {
    return this.add(encodeRecord(RecordKind.Retire, name, 0), undefined);
  }

  private add(record: Buffer, name: string | undefined): Promise<void> {
    if (this.closed) return Promise.reject(new StorageError("write", this.current.file, new Error("the session store is closed")));
    if (this.broken !== undefined) return Promise.reject(new StorageError("write", this.current.file, this.broken));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ record, name, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** From now on every append fails: a record that must not be replayed could not be disowned. */
  refuse(error: unknown): void {
    this.broken ??= error;
    this.files.warn(
      `${this.current.file}: a turn that failed could not be struck from the journal (${messageOf(error)}); no turn is kept until the gateway restarts`,
    );
  }

  /** Writes and syncs what waits, batch after batch, until nothing does. */
  private async flush(): Promise<void> {
    try {
      // Records added by the same turn of the event loop go in the first batch together.
      await Promise.resolve();
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        await this.write(batch);
        this.checkpointIfFull();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Makes the segment being written ready before a turn needs it (made, its head written and synced, its entry in the folder synced). */
  prepare(): void {
    this.opened(this.current).catch(() => {});
  }

  private opened(segment: Segment): Promise<FileHandle> {
    segment.opening ??= (async () => {
      segment.handle ??= await open(segment.file, SEGMENT_FLAGS, 0o600);
      if (segment.bytes === 0) {
        const head = encodeRecord(RecordKind.Segment, "", segment.seq);
        await writeAll(segment.handle, head, 0);
        segment.bytes = head.length;
      }
      await this.files.syncDir();
      return segment.handle;
    })();
    // One that failed is tried again by the next write.
    segment.opening.catch(() => {
      segment.opening = undefined;
    });
    return segment.opening;
  }

  private async write(batch: Waiting[]): Promise<void> {
    const segment = this.current;
    let start = segment.bytes;
    const data = batch.length === 1 ? batch[0]!.record : Buffer.concat(batch.map((waiting) => waiting.record));
    try {
      const handle = await this.opened(segment);
      start = segment.bytes;
      await writeAll(handle, data, start);
    } catch (error) {
      await this.undo(segment, start, error);
      const failure = new StorageError("write", segment.file, error);
      for (const waiting of batch) waiting.reject(failure);
      return;
    }
    segment.bytes = start + data.length;
    this.written++;
    for (const waiting of batch) {
      if (waiting.name !== undefined) segment.names.add(waiting.name);
      waiting.resolve();
    }
  }

  /** Cuts off a batch that failed, so that no record of it is replayed; when even that fails, the journal takes no more records. */
  private async undo(segment: Segment, start: number, error: unknown): Promise<void> {
    if (!segment.handle) return;
    try {
      await segment.handle.truncate(start);
    } catch (cutError) {
      this.broken = error;
      this.files.warn(`could not cut a failed write off ${segment.file} (${messageOf(cutError)}): no turn is kept until the gateway restarts`);
    }
  }

  /** Once the segment being written is full, the other one takes over and the full one is checkpointed (or a checkpoint that failed is tried again). */
  private checkpointIfFull(): void {
    if (this.checkpointing || this.closed) return;
    if (!this.older) {
      if (this.current.bytes < SEGMENT_BYTES) return;
      this.older = this.current;
      this.current = this.segment(this.older.seq + 1);
      this.prepare();
    }
    const older = this.older;
    this.checkpointing = this.checkpoint(older).then(
      () => {
        if (this.older === older) this.older = undefined;
      },
      (error: unknown) => this.files.warn(`could not checkpoint ${older.file} (${messageOf(error)}); it is tried again with the next write`),
    );
    void this.checkpointing.finally(() => {
      this.checkpointing = undefined;
    });
  }

  /** Makes what a segment holds durable in the session files themselves, then deletes it. */
  private async checkpoint(segment: Segment, parallel = 1): Promise<void> {
    const names = [...segment.names];
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        for (let name = names.pop(); name !== undefined; name = names.pop()) await this.files.syncFile(name);
      }),
    );
    await this.files.syncDir();
    await segment.handle?.close();
    segment.handle = undefined;
    try {
      await unlink(segment.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    await this.files.syncDir();
  }

  /** Writes what waits, then checkpoints both segments: after a clean stop there is no journal. */
  async close(): Promise<void> {
    while (this.flushing || this.checkpointing) {
      await this.flushing;
      await this.checkpointing;
    }
    this.closed = true;
    await this.current.opening?.catch(() => {});
    // The older first: the newer may hold the Retire records that keep the older's from being replayed.
    for (const segment of [this.older, this.current]) {
      if (!segment?.handle && !segment?.names.size) continue;
      try {
        await this.checkpoint(segment, 8);
      } catch (error) {
        this.files.warn(`could not checkpoint ${segment.file} (${messageOf(error)}); the next start replays the journal`);
        return;
      }
    }
  }

  private segment(seq: number): Segment {
    return { seq, file: path.join(this.dir, JOURNAL_FILES[seq % 2]!), handle: undefined, bytes: 0, opening: undefined, names: new Set() };
  }
}

/** Writes all of `data` at `position`; durable once it resolves (O_DSYNC, or a sync after it where the platform has none). */
async function writeAll(handle: FileHandle, data: Buffer, position: number): Promise<void> {
  for (let done = 0; done < data.length; ) done += (await handle.write(data, done, data.length - done, position + done)).bytesWritten;
  if (DSYNC === undefined) await handle.datasync();
}
