import { DEFAULT_STATE_LIMITS, type FeatureStateStore, type StateEntry, type StateLimits, StateNamespace } from "../feature-state.js";
import { KeyQueue } from "../key-queue.js";
import { StorageError } from "./storage-error.js";
import { StateFiles, StateWriteError } from "./state-files.js";

/**
 * Durable feature state of the JSONL store: each namespace in its file of
 * the session folder (state-files.ts), read on first use and then held in
 * memory. Changes to one namespace go one at a time; each is on disk before
 * it resolves. One that could not be written changes nothing; one whose
 * file was replaced but whose folder could not be synced after it is held
 * as the file now says (memory and disk agree) and still rejects, saying
 * so: a caller that took a due job with `expect` sees a failure, and nobody
 * takes that job again at that version.
 */
export class JsonlFeatureState implements FeatureStateStore {
  private readonly files: StateFiles;
  private readonly loaded = new Map<string, Promise<StateNamespace>>();
  private readonly queue = new KeyQueue();

  constructor(
    sessionDir: string,
    private readonly limits: StateLimits = DEFAULT_STATE_LIMITS,
  ) {
    this.files = new StateFiles(sessionDir);
  }

  private namespace(name: string): Promise<StateNamespace> {
    let found = this.loaded.get(name);
    if (!found) {
      found = this.read(name);
      this.loaded.set(name, found);
      // A namespace that could not be read is read again next time.
      found.catch(() => this.loaded.delete(name));
    }
    return found;
  }

  private async read(name: string): Promise<StateNamespace> {
    const text = await this.files.read(name);
    if (text === undefined) return new StateNamespace(name, this.limits);
    let entries: StateEntry[];
    try {
      const parsed = JSON.parse(text) as { entries?: unknown };
      if (!Array.isArray(parsed.entries)) throw new Error("no entries list");
      entries = parsed.entries.map((entry: Partial<StateEntry>) => {
        if (typeof entry.key !== "string" || !Number.isInteger(entry.version)) throw new Error("an entry without key or version");
        return { key: entry.key, value: entry.value, version: entry.version! };
      });
    } catch (error) {
      throw new StorageError("read", this.files.fileOf(name), error);
    }
    // Read as written, past today's limits too: they bound what is added.
    return new StateNamespace(name, this.limits, entries);
  }

  async get(namespace: string, key: string): Promise<StateEntry | undefined> {
    return (await this.namespace(namespace)).get(key);
  }

  async list(namespace: string): Promise<StateEntry[]> {
    return (await this.namespace(namespace)).list();
  }

  put(namespace: string, key: string, value: unknown, expect?: number): Promise<number | undefined> {
    return this.queue.run(namespace, async () => {
      const space = await this.namespace(namespace);
      const entry = space.next(key, value, expect);
      if (!entry) return undefined;
      await this.written(this.files.write(namespace, serialise([...space.list().filter((e) => e.key !== key), entry])), () => space.set(entry));
      return entry.version;
    });
  }

  delete(namespace: string, key: string, expect?: number): Promise<boolean> {
    return this.queue.run(namespace, async () => {
      const space = await this.namespace(namespace);
      if (!space.removable(key, expect)) return false;
      await this.written(this.files.write(namespace, serialise(space.list().filter((e) => e.key !== key))), () => space.remove(key));
      return true;
    });
  }

  /** Applies a change to memory once its file holds it (even when the write then failed to be made durable). */
  private async written(write: Promise<void>, apply: () => void): Promise<void> {
    try {
      await write;
    } catch (error) {
      if (error instanceof StateWriteError && error.replaced) apply();
      throw error;
    }
    apply();
  }

  async close(): Promise<void> {
    await this.queue.drain();
    this.files.close();
  }
}

function serialise(entries: readonly StateEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return `${JSON.stringify({ entries: sorted })}\n`;
}
