/**
 * A map of what the gateway keeps for a while for its clients (answers to
 * replay, stored responses), bounded: each entry lives `ttlMs`, and past
 * `maxEntries` or `maxBytes` the oldest go first (the map's order); an entry
 * `pinned` says must stay (a request still running) is passed over.
 */
export class BoundedMap<V> {
  private readonly entries = new Map<string, { value: V; bytes: number; expiresAt: number }>();
  private total = 0;

  constructor(
    private readonly limits: { maxEntries: number; maxBytes: number; ttlMs: number },
    private readonly now: () => number = Date.now,
    private readonly pinned: (value: V) => boolean = () => false,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const found = this.entries.get(key);
    if (found && found.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return found?.value;
  }

  /** Keeps the value (`bytes` of it counted), then lets the oldest go while over the bounds. */
  set(key: string, value: V, bytes = 0): void {
    this.delete(key);
    this.entries.set(key, { value, bytes, expiresAt: this.now() + this.limits.ttlMs });
    this.total += bytes;
    const now = this.now();
    for (const [k, e] of [...this.entries]) {
      const over = this.entries.size > this.limits.maxEntries || this.total > this.limits.maxBytes;
      if (!over && e.expiresAt > now) break;
      if (k !== key && !this.pinned(e.value)) this.delete(k);
    }
  }

  delete(key: string): void {
    const found = this.entries.get(key);
    if (!found) return;
    this.total -= found.bytes;
    this.entries.delete(key);
  }
}
