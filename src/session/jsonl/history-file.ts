import type { ChatMessage } from "../../models/message.js";
import { agentOfKey } from "../key.js";
import type { SessionFiles } from "./session-files.js";
import { parseTranscript, repairToolPairs, toLines } from "./transcript.js";

/** What a session's history file held, repaired. */
export interface ReadHistory {
  messages: ChatMessage[];
  /** Something was wrong with it (each said in a warning): its next change rewrites it. */
  repaired: boolean;
  /** Bytes and message lines of the file as it is now (a torn end was cut off). */
  bytes: number;
  lines: number;
}

/**
 * Reads a session's history file: its messages, a torn end cut off the file,
 * tool calls and results paired again; each problem is a warning naming the
 * file and the line. Undefined when there is no file.
 */
export async function readHistoryFile(files: SessionFiles, name: string, warn: (message: string) => void): Promise<ReadHistory | undefined> {
  const text = await files.read(name);
  if (text === undefined) return undefined;
  const file = files.historyFile(name);
  const parsed = parseTranscript(text, file);
  if (parsed.completeBytes < Buffer.byteLength(text)) await files.cut(name, parsed.completeBytes);
  const repaired = repairToolPairs(parsed.messages, file);
  for (const problem of [...parsed.warnings, ...repaired.repairs]) warn(problem);
  return {
    messages: repaired.messages,
    repaired: parsed.warnings.length + repaired.repairs.length > 0,
    bytes: parsed.completeBytes,
    lines: parsed.messages.length,
  };
}

export interface MetaFacts {
  updatedAt: number;
  /** When the session began, if known (else read from its meta file, or `updatedAt`). */
  createdAt?: number;
  count: number;
  bytes: number;
}

/** Writes a session's meta file; returns when the session began (its `created_at`). */
export async function writeSessionMeta(files: SessionFiles, key: string, name: string, facts: MetaFacts): Promise<number> {
  let createdAt = facts.createdAt;
  if (createdAt === undefined) {
    const before = Date.parse((await files.readMeta(name))?.created_at ?? "");
    createdAt = Number.isNaN(before) ? facts.updatedAt : before;
  }
  await files.writeMeta(name, {
    key,
    agent: agentOfKey(key) ?? "",
    created_at: new Date(createdAt).toISOString(),
    updated_at: new Date(facts.updatedAt).toISOString(),
    count: facts.count,
    bytes: facts.bytes,
  });
  return createdAt;
}

/** The message count a session's meta file gives, if the meta file still describes its history (same size); else undefined. */
export async function countFromMeta(files: SessionFiles, key: string, name: string): Promise<{ count: number; createdAt?: number } | undefined> {
  const meta = await files.readMeta(name);
  if (!meta || meta.key !== key || meta.bytes !== (await files.size(name))) return undefined;
  const created = Date.parse(meta.created_at);
  return { count: meta.count, ...(Number.isNaN(created) ? {} : { createdAt: created }) };
}

/** What a store knows of a history file (unknown until it read or wrote it). */
export interface FileState {
  fileBytes: number | undefined;
  fileLines: number | undefined;
  /** The file holds what memory does not (repaired when read, or cut to new limits): rewrite it at the next change. */
  dirty: boolean;
}

/**
 * Writes a session's change to its file (the session `key`'s), and notes what the file now is:
 * the `appended` messages at its end, or (when there are none to append,
 * the file does not match memory, or it would grow past twice the
 * session's limits) the whole of what the session keeps, anew.
 */
export async function writeChange(
  files: SessionFiles,
  name: string,
  key: string,
  state: FileState,
  kept: readonly ChatMessage[],
  appended: readonly ChatMessage[] | undefined,
  limits: { maxBytes: number; maxMessages: number },
): Promise<void> {
  if (appended && !state.dirty && state.fileBytes !== undefined) {
    const lines = toLines(appended);
    const bytes = state.fileBytes + Buffer.byteLength(lines);
    const count = (state.fileLines ?? 0) + appended.length;
    if (bytes <= 2 * limits.maxBytes && count <= 2 * limits.maxMessages) {
      await files.append(name, lines, state.fileBytes, key);
      state.fileBytes = bytes;
      state.fileLines = count;
      return;
    }
  }
  const text = toLines(kept);
  await files.rewrite(name, text);
  state.fileBytes = Buffer.byteLength(text);
  state.fileLines = kept.length;
  state.dirty = false;
}
