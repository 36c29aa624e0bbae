import type { Delivery } from "../feature/feature.js";

/**
 * What reaches a chat user outside a request/response pair: deliveries of
 * background turns (a spawned subagent's result, answered by the parent),
 * and features' notices (a subagent started or ended). Open streams (`GET .../events`) get each
 * item as it happens; a delivery no stream received is kept for the session
 * and handed out once: to the next stream that opens or at the front of the
 * next chat response. Nothing is lost, nothing is shown twice.
 */

export type OutboxItem = ({ type: "delivery" } & Delivery) | Notice;

/** A feature's notice: an event name and its JSON data, shown to open streams as it is. */
export interface Notice {
  type: "notice";
  event: string;
  data: Readonly<Record<string, unknown>>;
}

export type Subscriber = (item: OutboxItem) => void;

export const MAX_KEPT_PER_SESSION = 100;
export const MAX_KEPT_TOTAL = 10_000;

export class Outbox {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** Undelivered deliveries, per session, in order; the map's order is the age of each session's oldest. */
  private readonly kept = new Map<string, Delivery[]>();
  private keptTotal = 0;

  constructor(private readonly onDrop: (sessionKey: string, dropped: number) => void = () => {}) {}

  /** Starts sending the session's items to `subscriber`, first handing it whatever was kept. */
  subscribe(sessionKey: string, subscriber: Subscriber): () => void {
    for (const delivery of this.drain(sessionKey)) subscriber({ type: "delivery", ...delivery });
    let set = this.subscribers.get(sessionKey);
    if (!set) this.subscribers.set(sessionKey, (set = new Set()));
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(sessionKey) === set) this.subscribers.delete(sessionKey);
    };
  }

  /** Whether a stream is open for the session. */
  watched(sessionKey: string): boolean {
    return (this.subscribers.get(sessionKey)?.size ?? 0) > 0;
  }

  /**
   * Sends an item to the session's open streams. A delivery with `keep`
   * that no stream received is kept for later; notices are never kept.
   */
  publish(sessionKey: string, item: OutboxItem, keep = false): void {
    const set = this.subscribers.get(sessionKey);
    if (set && set.size > 0) {
      for (const subscriber of [...set]) subscriber(item);
      return;
    }
    if (!keep || item.type !== "delivery") return;
    let list = this.kept.get(sessionKey);
    if (!list) this.kept.set(sessionKey, (list = []));
    list.push({ from: item.from, text: item.text });
    this.keptTotal++;
    if (list.length > MAX_KEPT_PER_SESSION) this.dropOldest(sessionKey, list.length - MAX_KEPT_PER_SESSION);
    while (this.keptTotal > MAX_KEPT_TOTAL) {
      const oldest = this.kept.keys().next().value as string;
      this.dropOldest(oldest, 1);
    }
  }

  /** The session's kept deliveries, oldest first; they are no longer kept. */
  drain(sessionKey: string): Delivery[] {
    const list = this.kept.get(sessionKey);
    if (!list) return [];
    this.kept.delete(sessionKey);
    this.keptTotal -= list.length;
    return list;
  }

  /** Forgets what was kept for a session (/clear). */
  clearSession(sessionKey: string): void {
    this.drain(sessionKey);
  }

  private dropOldest(sessionKey: string, count: number): void {
    const list = this.kept.get(sessionKey);
    if (!list) return;
    const dropped = list.splice(0, count).length;
    this.keptTotal -= dropped;
    if (list.length === 0) this.kept.delete(sessionKey);
    this.onDrop(sessionKey, dropped);
  }
}
