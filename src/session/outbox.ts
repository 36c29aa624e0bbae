import type { Delivery } from "./delivery.js";
import { REPLAY_LIMITS, ReplayBuffer, type ReplayLimits } from "./replay-buffer.js";
import { jsonBytes, utf8Bytes } from "./size.js";
import {
  type CloseReason,
  type Envelope,
  type OutboxItem,
  type QueueLimits,
  type SessionStream,
  type SubscribeOptions,
  Subscription,
  idAfter,
} from "./subscription.js";

export type { Envelope, Notice, OutboxItem, QueueLimits, SessionStream, SubscribeOptions } from "./subscription.js";
export { Subscription, idAfter } from "./subscription.js";
export { REPLAY_LIMITS, type ReplayLimits } from "./replay-buffer.js";

/**
 * What reaches a chat user outside a request/response pair: deliveries of
 * background turns (a spawned subagent's result, answered by the parent),
 * and features' notices (a subagent started or ended). Open streams (`GET
 * .../events`) get each item as it happens, through a bounded queue each
 * (`Subscription`), with its event id. A delivery no stream showed is kept
 * for the session and handed out once: to the next stream that opens or at
 * the front of the next chat response. What is kept is bounded too; the
 * oldest goes first, and the log says so. Nothing is lost silently, nothing
 * is shown twice. A stream that comes back with the last id it got
 * (`after`) is handed what it missed first, from the session's replay
 * (replay-buffer.ts), whichever stream took it meanwhile.
 */

const MiB = 1024 * 1024;

/** Each open stream's queue: past it the stream is closed (its client stopped reading). */
export const STREAM_QUEUE: Readonly<QueueLimits> = { maxItems: 256, maxBytes: MiB };

/** Deliveries kept while no stream shows them: per session and in all (the newest one is kept even if it alone is over). */
export const MAX_KEPT_PER_SESSION = 100;
export const MAX_KEPT_BYTES_PER_SESSION = 4 * MiB;
export const MAX_KEPT_TOTAL = 10_000;
export const MAX_KEPT_BYTES_TOTAL = 32 * MiB;

/**
 * What reaches a session's user outside a request/response pair, as a
 * port: the in-process Outbox below, or one a store several gateways share
 * (a delivery published on one reaches the streams open on another).
 */
export interface SessionOutbox {
  /**
   * A new stream of the session's items, through a bounded queue; it gets
   * whatever was kept first, and with `after` (the last event id its client
   * got) what came after that id and is still held.
   */
  subscribe(sessionKey: string, options?: SubscribeOptions): SessionStream;
  /** Calls `subscriber` with what reaches the session (a feature's subscription: a chat channel); returns the function that stops it. */
  feed(sessionKey: string, subscriber: (item: OutboxItem) => void): () => void;
  /** Sends an item to the session's open streams; a delivery with `keep` that no stream takes is kept for later. */
  publish(sessionKey: string, item: OutboxItem, keep?: boolean): void;
  /** The session's kept deliveries, oldest first; they are no longer kept. */
  drain(sessionKey: string): Promise<Delivery[]>;
  /** Forgets what was kept for a session, and its replay (/clear). */
  clearSession(sessionKey: string): Promise<void>;
}

export interface OutboxEvents {
  /** Kept deliveries were dropped, oldest first, to stay within bounds. */
  dropped?(sessionKey: string, count: number): void;
  /** A stream was closed because its client stopped reading; its deliveries went back to the session. */
  overflowed?(sessionKey: string, items: number, bytes: number): void;
}

export interface OutboxOptions {
  /** Each stream's queue (default STREAM_QUEUE). */
  queueLimits?: QueueLimits;
  /** The replay's bounds (default REPLAY_LIMITS). */
  replay?: ReplayLimits;
  /** Milliseconds since the epoch: event ids start at a thousand times it, so a restarted gateway's ids come after its last run's. */
  now?: () => number;
}

interface Kept {
  entries: Envelope[];
  bytes: number;
}

/** UTF-8 bytes of an item's text. */
export function bytesOf(item: OutboxItem): number {
  return item.type === "delivery" ? utf8Bytes(item.from) + utf8Bytes(item.text) : utf8Bytes(item.event) + jsonBytes(item.data);
}

/** Envelopes in event id order, each id once (the first one given wins). */
export function inIdOrder(envelopes: readonly Envelope[]): Envelope[] {
  const seen = new Set<string>();
  const unique = envelopes.filter((envelope) => !seen.has(envelope.id) && seen.add(envelope.id));
  return unique.sort((a, b) => (a.id === b.id ? 0 : idAfter(a.id, b.id) ? 1 : -1));
}

/** A new envelope for an item (no stream holds it yet). */
export function envelopeOf(id: string, item: OutboxItem, keep: boolean, bytes = bytesOf(item), onShown?: (envelope: Envelope) => void): Envelope {
  return { id, item, bytes, keep: keep && item.type === "delivery", holders: 0, shown: false, ...(onShown ? { onShown } : {}) };
}

export class Outbox implements SessionOutbox {
  private readonly subscribers = new Map<string, Set<Subscription>>();
  /** Undelivered deliveries, per session, in order; the map's order is the age of each session's oldest. */
  private readonly kept = new Map<string, Kept>();
  private keptItems = 0;
  private keptBytes = 0;
  private readonly replay: ReplayBuffer;
  /** Event streams (a client may come back to them), as against chat channels' feeds. */
  private readonly resumable = new WeakSet<Subscription>();
  private readonly queueLimits: QueueLimits;
  private nextId: number;

  constructor(
    private readonly events: OutboxEvents = {},
    given: OutboxOptions | QueueLimits = {},
  ) {
    // (A second argument that is a queue's limits is how the outbox was made before it had options.)
    const options: OutboxOptions = "maxItems" in given ? { queueLimits: given } : given;
    this.queueLimits = options.queueLimits ?? STREAM_QUEUE;
    this.replay = new ReplayBuffer(options.replay ?? REPLAY_LIMITS);
    this.nextId = Math.max(1, Math.floor((options.now ?? Date.now)() * 1000));
  }

  /** A new stream of the session's items; it gets whatever was kept first, and with `after` what its client missed. */
  subscribe(sessionKey: string, options: SubscribeOptions = {}): Subscription {
    const subscription = this.open(sessionKey);
    const kept = this.takeKept(sessionKey);
    const missed = options.after === undefined ? [] : this.replay.since(sessionKey, options.after).map((e) => envelopeOf(e.id, e.item, false, e.bytes));
    for (const envelope of inIdOrder([...kept, ...missed])) subscription.offer(envelope, true);
    this.resumable.add(subscription);
    this.replay.watch(sessionKey);
    return subscription;
  }

  /**
   * Calls `subscriber` with what reaches the session, fed from a bounded
   * queue as an event stream is (a feature's subscription: a chat channel).
   * Returns the function that stops it. A chat channel never resumes, so
   * the session gets no replay for it.
   */
  feed(sessionKey: string, subscriber: (item: OutboxItem) => void): () => void {
    const subscription = this.open(sessionKey);
    for (const envelope of this.takeKept(sessionKey)) subscription.offer(envelope, true);
    return pump(subscription, subscriber);
  }

  /** Whether a stream is open for the session. */
  watched(sessionKey: string): boolean {
    return (this.subscribers.get(sessionKey)?.size ?? 0) > 0;
  }

  /** What the replay holds now (tests, metrics). */
  get replayed(): { items: number; bytes: number; sessions: number } {
    return this.replay.size;
  }

  /**
   * Sends an item to the session's open streams. A delivery with `keep`
   * that no stream takes is kept for later; notices are never kept.
   */
  publish(sessionKey: string, item: OutboxItem, keep = false): void {
    const envelope = envelopeOf(String(this.nextId++), item, keep);
    const open = this.subscribers.get(sessionKey);
    // A session with an event stream open stays among those replayed, however many others were touched since.
    if (open && [...open].some((s) => this.resumable.has(s))) this.replay.watch(sessionKey);
    this.replay.record(sessionKey, envelope);
    for (const subscription of [...(open ?? [])]) subscription.offer(envelope);
    if (envelope.holders === 0) this.keep(sessionKey, [envelope]);
  }

  async drain(sessionKey: string): Promise<Delivery[]> {
    return this.takeKept(sessionKey).map(({ item }) => deliveryOf(item));
  }

  async clearSession(sessionKey: string): Promise<void> {
    this.takeKept(sessionKey);
    this.replay.forget(sessionKey);
  }

  private open(sessionKey: string): Subscription {
    const subscription = new Subscription(
      sessionKey,
      this.queueLimits,
      (s) => this.detach(s),
      (s, left, bytes, reason) => this.takeBack(s, left, bytes, reason),
    );
    let set = this.subscribers.get(sessionKey);
    if (!set) this.subscribers.set(sessionKey, (set = new Set()));
    set.add(subscription);
    return subscription;
  }

  private detach(subscription: Subscription): void {
    const set = this.subscribers.get(subscription.sessionKey);
    if (!set?.delete(subscription)) return;
    if (set.size === 0) this.subscribers.delete(subscription.sessionKey);
  }

  /** What a closed stream held: deliveries no stream showed and none holds any more are kept for the session. */
  private takeBack(subscription: Subscription, left: readonly Envelope[], bytes: number, reason: CloseReason): void {
    if (reason === "overflow") this.events.overflowed?.(subscription.sessionKey, left.length, bytes);
    this.keep(subscription.sessionKey, left);
  }

  private takeKept(sessionKey: string): Envelope[] {
    const kept = this.kept.get(sessionKey);
    if (!kept) return [];
    this.kept.delete(sessionKey);
    this.keptItems -= kept.entries.length;
    this.keptBytes -= kept.bytes;
    return kept.entries;
  }

  /** Keeps the deliveries among `envelopes` that need it, then drops the oldest kept ones past the bounds. */
  private keep(sessionKey: string, envelopes: readonly Envelope[]): void {
    const wanted = envelopes.filter((e) => e.keep && e.holders === 0 && !e.shown);
    if (wanted.length === 0) return;
    let kept = this.kept.get(sessionKey);
    if (!kept) this.kept.set(sessionKey, (kept = { entries: [], bytes: 0 }));
    for (const envelope of wanted) {
      // Kept anew: a stream that gets it later holds it afresh.
      kept.entries.push(envelopeOf(envelope.id, envelope.item, true, envelope.bytes));
      kept.bytes += envelope.bytes;
      this.keptItems++;
      this.keptBytes += envelope.bytes;
    }
    // Given back by a stream, a delivery may be older than one kept since: kept in the order they were published.
    if (kept.entries.length > 1) kept.entries = inIdOrder(kept.entries);
    let over = 0;
    let bytes = kept.bytes;
    while (kept.entries.length - over > 1 && (kept.entries.length - over > MAX_KEPT_PER_SESSION || bytes > MAX_KEPT_BYTES_PER_SESSION)) {
      bytes -= kept.entries[over]!.bytes;
      over++;
    }
    if (over > 0) this.dropOldest(sessionKey, over);
    const dropped = new Map<string, number>();
    while (this.keptItems > MAX_KEPT_TOTAL || (this.keptBytes > MAX_KEPT_BYTES_TOTAL && this.keptItems > 1)) {
      const oldest = this.kept.keys().next().value as string;
      this.dropOldest(oldest, 1, false);
      dropped.set(oldest, (dropped.get(oldest) ?? 0) + 1);
    }
    for (const [key, count] of dropped) this.events.dropped?.(key, count);
  }

  private dropOldest(sessionKey: string, count: number, report = true): void {
    const kept = this.kept.get(sessionKey);
    if (!kept) return;
    const gone = kept.entries.splice(0, count);
    const bytes = gone.reduce((sum, entry) => sum + entry.bytes, 0);
    kept.bytes -= bytes;
    this.keptItems -= gone.length;
    this.keptBytes -= bytes;
    if (kept.entries.length === 0) this.kept.delete(sessionKey);
    if (report) this.events.dropped?.(sessionKey, gone.length);
  }
}

/** The delivery an item is (kept items are deliveries). */
export function deliveryOf(item: OutboxItem): Delivery {
  return item.type === "delivery" ? { from: item.from, text: item.text } : { from: item.event, text: JSON.stringify(item.data) };
}

/** Hands a subscription's items to `subscriber` as they arrive; returns the function that closes it. */
export function pump(subscription: SessionStream, subscriber: (item: OutboxItem) => void): () => void {
  void (async () => {
    while (!subscription.ended) {
      await subscription.changed();
      for (let item = subscription.take(); item; item = subscription.take()) subscriber(item);
    }
  })();
  return () => subscription.close();
}
