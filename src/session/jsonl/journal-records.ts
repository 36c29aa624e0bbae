import { crc32 } from "node:zlib";

/**
 * The records of the session folder's journal (journal.ts), as bytes. Pure.
 *
 * A record: a 24-byte head, then the session file's name, the session key
 * (only for a shortened name, which cannot be read back), then the payload.
 * Head: kind (u8), 0 (u8), name bytes (u16), key bytes (u16), 0 (u16),
 * payload bytes (u32), CRC-32 of everything but itself (u32), offset
 * (f64: where in the session file the payload goes; for the segment's head,
 * its sequence number). All little-endian. A record whose CRC does not
 * match, or that is cut short, ends what is read of a segment: it is the
 * write a crash cut short, never synced, so no reply waited for it.
 */

export const HEAD_BYTES = 24;

/** What a record says: the segment's head; `payload` appended to the session file `name` at `offset`; the file `name` replaced or removed from here on (no record before this one is replayed into it). */
export const RecordKind = { Segment: 1, Append: 2, Retire: 3 } as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

export interface JournalRecord {
  kind: RecordKind;
  name: string;
  /** The session key of a shortened name (else empty). */
  key: string;
  offset: number;
  payload: Buffer;
}

const EMPTY = Buffer.alloc(0);

export function encodeRecord(kind: RecordKind, name: string, offset: number, payload: Buffer = EMPTY, key = ""): Buffer {
  const nameBytes = Buffer.byteLength(name);
  const keyBytes = Buffer.byteLength(key);
  const record = Buffer.allocUnsafe(HEAD_BYTES + nameBytes + keyBytes + payload.length);
  record.writeUInt8(kind, 0);
  record.writeUInt8(0, 1);
  record.writeUInt16LE(nameBytes, 2);
  record.writeUInt16LE(keyBytes, 4);
  record.writeUInt16LE(0, 6);
  record.writeUInt32LE(payload.length, 8);
  record.writeDoubleLE(offset, 16);
  record.write(name, HEAD_BYTES, "utf8");
  record.write(key, HEAD_BYTES + nameBytes, "utf8");
  payload.copy(record, HEAD_BYTES + nameBytes + keyBytes);
  record.writeUInt32LE(checksum(record), 12);
  return record;
}

function checksum(record: Buffer): number {
  return crc32(record.subarray(HEAD_BYTES - 8), crc32(record.subarray(0, 12)));
}

/** The whole records at the start of `data`, in order, up to the first one that is cut short or damaged; `end` is where they stop. */
export function decodeRecords(data: Buffer): { records: JournalRecord[]; end: number } {
  const records: JournalRecord[] = [];
  let at = 0;
  while (data.length - at >= HEAD_BYTES) {
    const kind = data.readUInt8(at) as RecordKind;
    const nameBytes = data.readUInt16LE(at + 2);
    const keyBytes = data.readUInt16LE(at + 4);
    const payloadBytes = data.readUInt32LE(at + 8);
    const size = HEAD_BYTES + nameBytes + keyBytes + payloadBytes;
    if (kind < RecordKind.Segment || kind > RecordKind.Retire || data.length - at < size) break;
    const record = data.subarray(at, at + size);
    if (record.readUInt32LE(12) !== checksum(record)) break;
    const nameAt = HEAD_BYTES;
    records.push({
      kind,
      name: record.toString("utf8", nameAt, nameAt + nameBytes),
      key: record.toString("utf8", nameAt + nameBytes, nameAt + nameBytes + keyBytes),
      offset: record.readDoubleLE(16),
      payload: record.subarray(nameAt + nameBytes + keyBytes),
    });
    at += size;
  }
  return { records, end: at };
}
