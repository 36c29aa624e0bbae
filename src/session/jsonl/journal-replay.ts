import { closeSync, constants, fdatasyncSync, fstatSync, fsyncSync, lstatSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { JOURNAL_FILES } from "./journal.js";
import { type JournalRecord, RecordKind, decodeRecords } from "./journal-records.js";
import { SessionDirUnusableError } from "./storage-error.js";

const NOFOLLOW = (constants.O_NOFOLLOW as number | undefined) ?? 0;
/** The characters of a session file's name (file-names.ts): a record naming anything else is not replayed. */
const SESSION_NAME = /^[a-z0-9_~-]{1,255}$/;

/** What replaying needs of the session files. */
export interface ReplayFiles {
  readonly dir: string;
  historyFile(name: string): string;
  /** Writes (and syncs) a meta file naming `key` for a shortened name that has none, whose key cannot be read back from the name; whether it wrote one. */
  nameSync(name: string, key: string): boolean;
  warn(message: string): void;
}

/**
 * Replays what a crash left in the session folder's journal (journal.ts), at
 * start-up, before anything reads a session file: every record of an
 * append that was synced (and so may have been answered) is made to be in
 * its session file, byte for byte at its offset, unless the file was
 * replaced or removed after it (a Retire record). A record the file holds
 * already (a kill -9: the file's own write had happened) changes nothing.
 * Then the files it touched are synced, the folder too, and the journal is
 * deleted. Costs nothing per stored session: it reads the journal (at most
 * two segments) and the files it names, nothing else.
 */
export function replayJournal(files: ReplayFiles): void {
  const records = readSegments(files);
  const lastRetire = new Map<string, number>();
  records.forEach((record, i) => {
    if (record.kind === RecordKind.Retire) lastRetire.set(record.name, i);
  });
  const opened = new Map<string, number>();
  const skipped = new Set<string>();
  const named = new Set<string>();
  let created = false;
  let repaired = 0;
  try {
    for (const [i, record] of records.entries()) {
      if (record.kind !== RecordKind.Append || skipped.has(record.name) || i < (lastRetire.get(record.name) ?? -1)) continue;
      if (!SESSION_NAME.test(record.name)) continue;
      const file = files.historyFile(record.name);
      let fd = opened.get(record.name);
      if (fd === undefined) {
        created ||= !lstatSync(file, { throwIfNoEntry: false });
        fd = openSync(file, constants.O_RDWR | constants.O_CREAT | NOFOLLOW, 0o600);
        opened.set(record.name, fd);
      }
      const size = fstatSync(fd).size;
      if (size < record.offset) {
        files.warn(`${file}: the journal has a turn for it at byte ${record.offset}, but it holds ${size} bytes (changed by hand?); not replayed`);
        skipped.add(record.name);
        continue;
      }
      if (!holds(fd, record)) {
        for (let done = 0; done < record.payload.length; ) done += writeSync(fd, record.payload, done, record.payload.length - done, record.offset + done);
        repaired++;
      }
      if (record.key !== "" && !named.has(record.name)) {
        named.add(record.name);
        if (files.nameSync(record.name, record.key)) created = true;
      }
    }
    for (const fd of opened.values()) fdatasyncSync(fd);
  } finally {
    for (const fd of opened.values()) closeSync(fd);
  }
  if (created) syncFolder(files.dir);
  if (repaired > 0) files.warn(`${files.dir}: ${repaired} turn(s) a crash had left out of their session files were put back from the journal`);
  let removed = false;
  for (const name of JOURNAL_FILES) {
    const file = path.join(files.dir, name);
    if (!lstatSync(file, { throwIfNoEntry: false })) continue;
    unlinkSync(file);
    removed = true;
  }
  if (removed) syncFolder(files.dir);
}

/** The records of the journal's segments, oldest segment first; a segment without its head (made, never synced) holds none. */
function readSegments(files: ReplayFiles): JournalRecord[] {
  const segments: { seq: number; records: JournalRecord[] }[] = [];
  for (const name of JOURNAL_FILES) {
    const file = path.join(files.dir, name);
    const stats = lstatSync(file, { throwIfNoEntry: false });
    if (!stats) continue;
    if (!stats.isFile()) throw new SessionDirUnusableError(files.dir, new Error(`${file} is not a file, and the gateway keeps its journal there: remove it`));
    const fd = openSync(file, constants.O_RDONLY | NOFOLLOW);
    let data: Buffer;
    try {
      data = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
    const { records } = decodeRecords(data);
    const [head, ...rest] = records;
    if (head?.kind === RecordKind.Segment) segments.push({ seq: head.offset, records: rest });
  }
  return segments.sort((a, b) => a.seq - b.seq).flatMap((segment) => segment.records);
}

/** Whether the file holds the record's bytes at its offset. */
function holds(fd: number, record: JournalRecord): boolean {
  const found = Buffer.allocUnsafe(record.payload.length);
  let read = 0;
  while (read < found.length) {
    const n = readSync(fd, found, read, found.length - read, record.offset + read);
    if (n === 0) return false;
    read += n;
  }
  return found.equals(record.payload);
}

function syncFolder(dir: string): void {
  // Windows cannot open a folder as a file; its entries are durable once the call returns.
  if (process.platform === "win32") return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
