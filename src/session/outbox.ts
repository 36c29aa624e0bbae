import type { Delivery } from "./delivery.js";
import { jsonBytes, utf8Bytes } from "./size.js";
import { type CloseReason, type Envelope, type OutboxItem, type QueueLimits, type SessionStream, Subscription } from "./subscription.js";

export type { Notice, OutboxItem, QueueLimits, SessionStream } from "./subscription.js";
export { Subscription } from "./subscription.js";

/**
 * What reaches a chat user outside a request/response pair: deliveries of
 * background turns (a spawned subagent's result, answered by the parent),
 * and features' notices (a subagent started or ended). Open streams (`GET
 * .../events`) get each item as it happens, through a bounded queue each
 * (`Subscription`). A delivery no stream showed is kept for the session and
 * handed out once: to the next stream that opens or at the front of the
 * next chat response. What is kept is bounded too; the oldest goes first,
 * and the log says so. Nothing is lost silently, nothing is shown twice.
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
  /** A new stream of the session's items, through a bounded queue; it gets whatever was kept first. */
  subscribe(sessionKey: string): SessionStream;
  /** Calls `subscriber` with what reaches the session (a feature's subscription: a chat channel); returns the function that stops it. */
  feed(sessionKey: string, subscriber: (item: OutboxItem) => void): () => void;
  /** Sends an item to the session's open streams; a delivery with `keep` that no stream takes is kept for later. */
  publish(sessionKey: string, item: OutboxItem, keep?: boolean): void;
  /** The session's kept deliveries, oldest first; they are no longer kept. */
  drain(sessionKey: string): Promise<Delivery[]>;
  /** Forgets what was kept for a session (/clear). */
  clearSession(sessionKey: string): Promise<void>;
}

export interface OutboxEvents {
  /** Kept deliveries were dropped, oldest first, to stay within bounds. */
  dropped?(sessionKey: string, count: number): void;
  /** A stream was closed because its client stopped reading; its deliveries went back to the session. */
  overflowed?(sessionKey: string, items: number, bytes: number): void;
}

interface Kept {
  entries: { delivery: Delivery; bytes: number }[];
  bytes: number;
}

/** UTF-8 bytes of an item's text. */
function bytesOf(item: OutboxItem): number {
  return item.type === "delivery" ? utf8Bytes(item.from) + utf8Bytes(item.text) : utf8Bytes(item.event) + jsonBytes(item.data);
}

export class Outbox implements SessionOutbox {
  private readonly subscribers = new Map<string, Set<Subscription>>();
  /** Undelivered deliveries, per session, in order; the map's order is the age of each session's oldest. */
  private readonly kept = new Map<string, Kept>();
  private keptItems = 0;
  private keptBytes = 0;

  constructor(
    private readonly events: OutboxEvents = {},
    private readonly queueLimits: QueueLimits = STREAM_QUEUE,
  ) {}

  /** A new stream of the session's items; it gets whatever was kept first. */
  subscribe(sessionKey: string): Subscription {
    const subscription = new Subscription(
      sessionKey,
      this.queueLimits,
      (s) => this.detach(s),
      (s, left, bytes, reason) => this.takeBack(s, left, bytes, reason),
    );
    for (const { delivery, bytes } of this.takeKept(sessionKey)) {
      subscription.offer({ item: { type: "delivery", ...delivery }, bytes, keep: true, holders: 0, shown: false }, true);
    }
    let set = this.subscribers.get(sessionKey);
    if (!set) this.subscribers.set(sessionKey, (set = new Set()));
    set.add(subscription);
    return subscription;
  }
  /**
   * Calls `subscriber` with what reaches the session, fed from a bounded
   * queue as an event stream is (a feature's subscription: a chat channel).
   * Returns the function that stops it.
   */
  feed(sessionKey: string, subscriber: (item: OutboxItem) => void): () => void {
    const subscription = this.subscribe(sessionKey);
    void (async () => {
      while (!subscription.ended) {
        await subscription.changed();
        for (let item = subscription.take(); item; item = subscription.take()) subscriber(item);
      }
    })();
    return () => subscription.close();
  }

  /** Whether a stream is open for the session. */
  watched(sessionKey: string): boolean {
    return (this.subscribers.get(sessionKey)?.size ?? 0) > 0;
  }

  /**
   * Sends an item to the session's open streams. A delivery with `keep`
   * that no stream takes is kept for later; notices are never kept.
   */
  publish(sessionKey: string, item: OutboxItem, keep = false): void {
    const envelope: Envelope = { item, bytes: bytesOf(item), keep: keep && item.type === "delivery", holders: 0, shown: false };
    for (const subscription of [...(this.subscribers.get(sessionKey) ?? [])]) subscription.offer(envelope);
    if (envelope.holders === 0) this.keep(sessionKey, [envelope]);
  }

  async drain(sessionKey: string): Promise<Delivery[]> {
    return this.takeKept(sessionKey).map((entry) => entry.delivery);
  }

  async clearSession(sessionKey: string): Promise<void> {
    this.takeKept(sessionKey);
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

  private takeKept(sessionKey: string): Kept["entries"] {
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
    for (const { item, bytes } of wanted) {
      if (item.type !== "delivery") continue;
      kept.entries.push({ delivery: { from: item.from, text: item.text }, bytes });
      kept.bytes += bytes;
      this.keptItems++;
      this.keptBytes += bytes;
    }
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
