import { RequestError } from "../errors.js";
import { jsonBytes } from "./size.js";

/**
 * Durable feature state: a small keyed store of JSON values, a namespace
 * per feature (cron jobs, approvals), as a port. The memory store keeps it
 * in this process; the JSONL store in files of the session folder
 * (jsonl/jsonl-state.ts); a store several gateways share keeps it where
 * they all read it. Each entry has a version: `put` and `delete` with
 * `expect` change it only when it still has that version (0: when there is
 * none), so of two gateways taking the same due cron run, one wins.
 */

/** One entry: its key, its JSON value, and its version (1 when first written, one more at each change). */
export interface StateEntry {
  readonly key: string;
  readonly value: unknown;
  readonly version: number;
}

export interface FeatureStateStore {
  /**
   * True when other processes read and change it too (a database several
   * gateways share): what a feature read may change behind its back, so it
   * reads again from time to time (the cron schedule does).
   */
  readonly shared?: boolean;
  get(namespace: string, key: string): Promise<StateEntry | undefined>;
  /** Every entry of the namespace, by key. */
  list(namespace: string): Promise<StateEntry[]>;
  /**
   * Writes a JSON value; with `expect`, only when the entry's version is
   * that (0: only when there is none). Resolves with the new version once
   * it is kept for good, or undefined when `expect` did not match.
   */
  put(namespace: string, key: string, value: unknown, expect?: number): Promise<number | undefined>;
  /** Removes the entry (with `expect`, only at that version); false when there was none to remove. */
  delete(namespace: string, key: string, expect?: number): Promise<boolean>;
  close(): Promise<void>;
}

/** What one feature sees of the store: its own namespace. */
export interface FeatureState {
  /** Whether other gateways share this state (the store's `shared`). */
  readonly shared: boolean;
  get(key: string): Promise<StateEntry | undefined>;
  list(): Promise<StateEntry[]>;
  put(key: string, value: unknown, expect?: number): Promise<number | undefined>;
  delete(key: string, expect?: number): Promise<boolean>;
}

export function stateView(store: FeatureStateStore, namespace: string): FeatureState {
  return {
    shared: store.shared === true,
    get: (key) => store.get(namespace, key),
    list: () => store.list(namespace),
    put: (key, value, expect) => store.put(namespace, key, value, expect),
    delete: (key, expect) => store.delete(namespace, key, expect),
  };
}

/** How much one namespace holds at most (session.state_max_keys, session.state_max_bytes). */
export interface StateLimits {
  maxKeys: number;
  /** UTF-8 bytes of the entries' JSON (keys and values), together. */
  maxBytes: number;
}

export const DEFAULT_STATE_LIMITS: StateLimits = { maxKeys: 10_000, maxBytes: 4 * 1024 * 1024 };

/** A namespace's entries, with their size, as every implementation holds them in memory. */
export class StateNamespace {
  private readonly entries = new Map<string, StateEntry>();
  private total = 0;

  /** `entries` are taken as they are (read back, past today's limits too: the limits bound what is added). */
  constructor(
    readonly name: string,
    private readonly limits: StateLimits,
    entries: readonly StateEntry[] = [],
  ) {
    for (const entry of entries) this.set(entry);
  }

  get(key: string): StateEntry | undefined {
    return this.entries.get(key);
  }

  list(): StateEntry[] {
    return [...this.entries.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * The entry `put` would write, or undefined when `expect` does not match.
   * Throws a RequestError `state_full` (changing nothing) past the limits,
   * and `invalid_request` for a value JSON cannot carry.
   */
  next(key: string, value: unknown, expect: number | undefined): StateEntry | undefined {
    const found = this.entries.get(key);
    if (expect !== undefined && (found?.version ?? 0) !== expect) return undefined;
    const entry: StateEntry = { key, value: jsonValue(this.name, key, value), version: (found?.version ?? 0) + 1 };
    checkStateRoom(this.name, this.limits, key, { keys: this.entries.size, bytes: this.total - (found ? sizeOf(found) : 0) + sizeOf(entry), isNew: !found });
    return entry;
  }

  /** Keeps the entry, frozen (what `get` and `list` hand out cannot be changed behind the store's back). */
  set(entry: StateEntry): void {
    const found = this.entries.get(entry.key);
    if (found) this.total -= sizeOf(found);
    const kept = frozenEntry(entry);
    this.entries.set(entry.key, kept);
    this.total += sizeOf(kept);
  }

  /** Whether `delete` with `expect` may remove the key (there is an entry, at that version). */
  removable(key: string, expect: number | undefined): boolean {
    const found = this.entries.get(key);
    return found !== undefined && (expect === undefined || found.version === expect);
  }

  remove(key: string): void {
    const found = this.entries.get(key);
    if (!found) return;
    this.entries.delete(key);
    this.total -= sizeOf(found);
  }
}

/** UTF-8 bytes an entry counts for against session.state_max_bytes. */
export const sizeOf = (entry: Pick<StateEntry, "key" | "value">) => jsonBytes(entry.key) + jsonBytes(entry.value);

/** The value as JSON carries it (a copy); a RequestError `invalid_request` for one JSON cannot carry. */
export function jsonValue(namespace: string, key: string, value: unknown): unknown {
  const text = JSON.stringify(value);
  if (text === undefined) throw new RequestError("invalid_request", `state ${namespace}/${key}: the value is not JSON`);
  return JSON.parse(text);
}

/**
 * Throws a RequestError `state_full` when a change would take the namespace
 * past its limits: `keys` entries before it, `bytes` together after it.
 */
export function checkStateRoom(namespace: string, limits: StateLimits, key: string, after: { keys: number; bytes: number; isNew: boolean }): void {
  if (after.isNew && after.keys >= limits.maxKeys) {
    throw new RequestError("state_full", `state ${namespace}: it holds ${after.keys} entries, the most it may (session.state_max_keys); remove one first`);
  }
  if (after.bytes > limits.maxBytes) {
    throw new RequestError(
      "state_full",
      `state ${namespace}: ${key} would make it ${after.bytes} bytes, more than session.state_max_bytes (${limits.maxBytes})`,
    );
  }
}

/** An entry as stores hand it out: frozen all the way down (a change to it is a put, never a change behind the store's back). */
export function frozenEntry(entry: StateEntry): StateEntry {
  return Object.freeze({ key: entry.key, value: deepFreeze(entry.value), version: entry.version });
}

/** A JSON value frozen all the way down. */
function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Feature state in this process only: gone with it (the memory store's). */
export class MemoryFeatureState implements FeatureStateStore {
  private readonly namespaces = new Map<string, StateNamespace>();

  constructor(private readonly limits: StateLimits = DEFAULT_STATE_LIMITS) {}

  private namespace(name: string): StateNamespace {
    let found = this.namespaces.get(name);
    if (!found) this.namespaces.set(name, (found = new StateNamespace(name, this.limits)));
    return found;
  }

  async get(namespace: string, key: string): Promise<StateEntry | undefined> {
    return this.namespace(namespace).get(key);
  }

  async list(namespace: string): Promise<StateEntry[]> {
    return this.namespace(namespace).list();
  }

  async put(namespace: string, key: string, value: unknown, expect?: number): Promise<number | undefined> {
    const space = this.namespace(namespace);
    const entry = space.next(key, value, expect);
    if (!entry) return undefined;
    space.set(entry);
    return entry.version;
  }

  async delete(namespace: string, key: string, expect?: number): Promise<boolean> {
    const space = this.namespace(namespace);
    if (!space.removable(key, expect)) return false;
    space.remove(key);
    return true;
  }

  async close(): Promise<void> {}
}
