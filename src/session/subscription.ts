import type { SessionItem } from "./delivery.js";

/**
 * One open event stream's share of a session's outbox: a bounded queue
 * (items and bytes) between what the session publishes and what the stream
 * hands to its client. A stream that stops reading fills it; the next item
 * that does not fit closes the subscription, and the deliveries it still
 * held go back to the outbox, which keeps them for the session (notices are
 * dropped). Nothing is lost silently and nothing is shown twice: an item
 * counts as shown once a stream has handed it to its client.
 *
 * Every item carries its event id (`id:` on the events route), given by
 * the outbox: ids grow within a session, so a client that comes back with
 * the last one it got is handed what came after it (a resumed stream).
 */

export type OutboxItem = SessionItem;

/** A feature's notice: an event name and its JSON data, shown to open streams as it is. */
export type Notice = Extract<SessionItem, { type: "notice" }>;

/** An item on its way to a session's streams, shared by every stream that queued it. */
export interface Envelope {
  /** Its event id: decimal digits, growing within the session. */
  readonly id: string;
  readonly item: OutboxItem;
  /** UTF-8 bytes of the item's text. */
  readonly bytes: number;
  /** A delivery the session keeps when no stream shows it (a stream holding a twin of it, the same item read twice, takes this on). */
  keep: boolean;
  /** Streams that have it queued. */
  holders: number;
  /** Whether a stream has handed it to its client. */
  shown: boolean;
  /** Called once, when a stream first hands it to its client (a shared outbox records that it was shown). */
  readonly onShown?: (envelope: Envelope) => void;
}

export interface QueueLimits {
  /** Items a stream's queue holds at most. */
  maxItems: number;
  /** UTF-8 bytes of items' text a stream's queue holds at most (one item of any size fits an empty queue). */
  maxBytes: number;
}

export type CloseReason = "client" | "overflow";

/** How a stream starts: after which event id (a client's `Last-Event-ID`). */
export interface SubscribeOptions {
  /** The last event id the client got: it is handed what it missed (what is still held) first. */
  after?: string;
}

/** One open stream of a session's items, as its reader (an event stream, a channel) sees it. */
export interface SessionStream {
  readonly sessionKey: string;
  /** Called once when the stream is closed because its reader stopped reading (its queue overflowed). */
  onOverflow: (() => void) | undefined;
  /** The next queued item, or undefined. */
  take(): OutboxItem | undefined;
  /** The event id of the item `take` handed out last (undefined before the first). */
  readonly lastId: string | undefined;
  /** Nothing more will come. */
  readonly ended: boolean;
  /** It ended by `finish` (the gateway stopping) rather than by `close`. */
  readonly finished: boolean;
  /** Resolves when an item arrives or the stream ends. */
  changed(): Promise<void>;
  /** When set, resolves once the stream is known where it must be (a shared outbox told the other gateways); its answer waits for it. */
  readonly ready?: Promise<void> | undefined;
  /** Takes no more items; those queued are still handed out. */
  finish(): void;
  /** Ends it now: what it held and did not show goes back to be kept for the session. */
  close(): void;
}

/**
 * Whether event id `a` comes after `b`. An id is decimal digits (no leading
 * zeros), or digits, a dot and digits: an event a gateway sent while it
 * could not write it down (its database was down), after the one before
 * the dot.
 */
export function idAfter(a: string, b: string): boolean {
  const [whole = "", part = "0"] = a.split(".");
  const [otherWhole = "", otherPart = "0"] = b.split(".");
  if (whole !== otherWhole) return whole.length === otherWhole.length ? whole > otherWhole : whole.length > otherWhole.length;
  return Number(part) > Number(otherPart);
}

export class Subscription implements SessionStream {
  private readonly queue: Envelope[] = [];
  private queuedBytes = 0;
  /** While the outbox reads what the stream starts with (a shared outbox asks its database), what arrives waits here. */
  private arriving: Envelope[] | undefined;
  private state: "open" | "finishing" | "closed" = "open";
  private wake: (() => void) | undefined;
  private last: string | undefined;
  /** What it started with (catchUp), by id: the same items offered later are not queued again. */
  private startedWith: Map<string, Envelope> | undefined;
  /** Called once when the queue overflows (the stream's client stopped reading); the subscription is closed by then. */
  onOverflow: (() => void) | undefined;
  /** Set by an outbox that tells others of the stream: resolves once they know. */
  ready: Promise<void> | undefined;

  constructor(
    readonly sessionKey: string,
    private readonly limits: QueueLimits,
    /** Stops the outbox sending to this subscription. */
    private readonly detach: (subscription: Subscription) => void,
    /** Takes back what this subscription held and did not show; says how many items and bytes were queued. */
    private readonly giveBack: (subscription: Subscription, left: readonly Envelope[], bytes: number, reason: CloseReason) => void,
    /** Starts catching up: items offered wait until `catchUp` hands it what it starts with. */
    catchingUp = false,
  ) {
    if (catchingUp) this.arriving = [];
  }

  /**
   * Queues an item (the outbox calls this). An item that does not fit
   * closes the subscription instead; `force` queues it anyway (what was
   * kept for the session, handed to a new stream).
   */
  offer(envelope: Envelope, force = false): boolean {
    if (this.state !== "open") return false;
    // An item it started with, arriving again (read once for the stream, once as it came): it has it already.
    const twin = this.startedWith?.get(envelope.id);
    if (twin) {
      this.adopt(twin, envelope);
      return true;
    }
    const count = this.queue.length + (this.arriving?.length ?? 0);
    const full = count >= this.limits.maxItems || this.queuedBytes + envelope.bytes > this.limits.maxBytes;
    if (full && count > 0 && !force) {
      this.close("overflow");
      return false;
    }
    (this.arriving ?? this.queue).push(envelope);
    this.queuedBytes += envelope.bytes;
    envelope.holders++;
    if (!this.arriving) this.signal();
    return true;
  }

  /**
   * What the stream starts with (kept deliveries, what its client missed)
   * and what arrived meanwhile that is not among them, in the order of
   * their ids. False
   * when it was closed meanwhile: the caller gives `first` back.
   */
  catchUp(first: readonly Envelope[]): boolean {
    const arrived = this.arriving ?? [];
    this.arriving = undefined;
    if (this.state === "closed") return false;
    const byId = new Map(first.map((envelope) => [envelope.id, envelope]));
    const fresh: Envelope[] = [];
    for (const envelope of arrived) {
      this.queuedBytes -= envelope.bytes;
      const twin = byId.get(envelope.id);
      if (twin) this.adopt(twin, envelope);
      else {
        envelope.holders--;
        fresh.push(envelope);
      }
    }
    const finishing = this.state === "finishing";
    // A stream finished meanwhile (the gateway stopping) still hands out what it starts with.
    if (finishing) this.state = "open";
    // In the order of their ids: what arrived meanwhile may be older than what it starts with (read a moment later).
    const all = [...first, ...fresh];
    all.sort((a, b) => (a.id === b.id ? 0 : idAfter(a.id, b.id) ? 1 : -1));
    for (const envelope of all) this.offer(envelope, true);
    if (byId.size > 0) this.startedWith = new Map([...byId, ...fresh.map((envelope) => [envelope.id, envelope] as const)]);
    if (finishing) this.state = "finishing";
    this.signal();
    return true;
  }

  /**
   * The same item a second time (`again`): the stream has it as `held`.
   * `again` stays counted as held (through its twin), so its outbox does not
   * keep it for the session; a delivery `again` was to be kept by makes the
   * twin the one to give back if it is never shown.
   */
  private adopt(held: Envelope, again: Envelope): void {
    if (again.keep && !held.keep && !held.shown) held.keep = true;
    if (again.keep && held.shown && !again.shown) {
      again.shown = true;
      again.onShown?.(again);
    }
    if (again.holders === 0) again.holders = 1;
  }

  /** The oldest queued item, now counted as shown to the client; undefined when none is queued. */
  take(): OutboxItem | undefined {
    const envelope = this.queue.shift();
    if (!envelope) return undefined;
    this.queuedBytes -= envelope.bytes;
    envelope.holders--;
    this.last = envelope.id;
    if (!envelope.shown) {
      envelope.shown = true;
      envelope.onShown?.(envelope);
    }
    return envelope.item;
  }

  get lastId(): string | undefined {
    return this.last;
  }

  /** Nothing more will come: closed, or finished with its queue handed out. */
  get ended(): boolean {
    return this.state === "closed" || (this.state === "finishing" && this.queue.length === 0 && !this.arriving);
  }

  /** Whether it ended by `finish` (the gateway stopping) rather than by `close`. */
  get finished(): boolean {
    return this.state === "finishing";
  }

  /** Items queued now. */
  get size(): number {
    return this.queue.length;
  }

  /** Resolves when an item arrives or the subscription ends (at once if one is queued or it has ended). */
  changed(): Promise<void> {
    this.wake?.();
    if (this.queue.length > 0 || this.ended) return Promise.resolve();
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  /** Takes no more items; those queued are still handed out (a stream ending on shutdown says goodbye after them). */
  finish(): void {
    if (this.state !== "open") return;
    this.state = "finishing";
    this.detach(this);
    this.signal();
  }

  /** Ends it now (the client left, or stopped reading): what it held and did not show goes back to the outbox. */
  close(reason: CloseReason = "client"): void {
    if (this.state === "closed") return;
    const wasOpen = this.state === "open";
    this.state = "closed";
    if (wasOpen) this.detach(this);
    const left = [...this.queue.splice(0), ...(this.arriving?.splice(0) ?? [])];
    const bytes = this.queuedBytes;
    this.queuedBytes = 0;
    for (const envelope of left) envelope.holders--;
    this.giveBack(this, left, bytes, reason);
    this.signal();
    if (reason === "overflow") this.onOverflow?.();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
