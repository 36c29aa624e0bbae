import { isTransientKey, parseSessionKey } from "../key.js";
import { fileNameOf, keyOfFileName } from "./file-names.js";
import type { SessionFiles } from "./session-files.js";

/** Files changed this close together are ordered by their meta files' times. */
const CLOSE_MS = 50;

export interface FoundSession {
  key: string;
  /** Its file name (without extension). */
  name: string;
  /** When it last changed (ms since the epoch). */
  updatedAt: number;
}

/**
 * The sessions in a session folder, oldest change first: by their files'
 * times, or their meta files' for files changed within `CLOSE_MS` of
 * another (file times come from a clock that may tick every few
 * milliseconds, and need not even be in order across files). A file whose
 * key cannot be told (a shortened name without its meta file) is left
 * alone, with a warning.
 */
export function findSessions(files: SessionFiles, warn: (message: string) => void): FoundSession[] {
  const found = files.scan().sort((a, b) => a.mtimeMs - b.mtimeMs);
  const order = found.map((file) => file.mtimeMs);
  found.forEach((file, i) => {
    const close = (j: number) => j >= 0 && j < found.length && Math.abs(found[j]!.mtimeMs - file.mtimeMs) < CLOSE_MS;
    if (!close(i - 1) && !close(i + 1)) return;
    const updated = Date.parse(files.readMetaSync(file.name)?.updated_at ?? "");
    if (!Number.isNaN(updated)) order[i] = updated;
  });
  const sessions: FoundSession[] = [];
  for (const [i, file] of found.entries()) {
    const meta = keyOfFileName(file.name) === null ? files.readMetaSync(file.name) : undefined;
    const key = keyOfFileName(file.name) ?? (meta && fileNameOf(meta.key) === file.name ? meta.key : null);
    if (key === null) {
      warn(`${files.historyFile(file.name)}: cannot tell which session it holds (its name is shortened and its meta file does not say); left alone`);
      continue;
    }
    // A name that decodes to no session key is another program's file: not listed, not evicted, not touched.
    if (parseSessionKey(key) === null) {
      warn(`${files.historyFile(file.name)}: not a session file of this gateway (its name is no session key); left alone`);
      continue;
    }
    if (!isTransientKey(key)) sessions.push({ key, name: file.name, updatedAt: Math.round(order[i]!) });
  }
  return sessions.sort((a, b) => a.updatedAt - b.updatedAt);
}
