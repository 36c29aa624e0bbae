import { Mutex } from "async-mutex";

/**
 * One FIFO lock per key, made on demand and forgotten when nobody holds or
 * waits for it, so idle sessions cost nothing.
 */
export class KeyedLocks {
  private readonly locks = new Map<string, { mutex: Mutex; users: number }>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let entry = this.locks.get(key);
    if (!entry) this.locks.set(key, (entry = { mutex: new Mutex(), users: 0 }));
    entry.users++;
    try {
      return await entry.mutex.runExclusive(work);
    } finally {
      if (--entry.users === 0) this.locks.delete(key);
    }
  }

  /** Number of keys with a live lock (for tests and metrics). */
  get size(): number {
    return this.locks.size;
  }
}
