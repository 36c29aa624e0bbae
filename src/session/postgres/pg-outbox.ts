import { messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Timer } from "../../signals.js";
import type { Delivery } from "../delivery.js";
import {
  type Envelope,
  MAX_KEPT_BYTES_PER_SESSION,
  MAX_KEPT_BYTES_TOTAL,
  MAX_KEPT_PER_SESSION,
  MAX_KEPT_TOTAL,
  Outbox,
  type OutboxItem,
  type QueueLimits,
  REPLAY_LIMITS,
  STREAM_QUEUE,
  type SessionOutbox,
  type SessionStream,
  type SubscribeOptions,
  Subscription,
  bytesOf,
  deliveryOf,
  envelopeOf,
  inIdOrder,
  pump,
} from "../outbox.js";
import { isTransientKey, parseSessionKey } from "../key.js";
import type { CloseReason } from "../subscription.js";
import type { NewRow, OutboxTable, Row, TableBounds } from "./outbox-rows.js";

/**
 * What the outbox table holds at most: what the in-process outbox would
 * (each session's replay, and the deliveries kept for it, within the same
 * bounds), and in all the sum of its totals.
 */
export const TABLE_BOUNDS: Readonly<TableBounds> = {
  replay: REPLAY_LIMITS.perSession,
  kept: { maxItems: MAX_KEPT_PER_SESSION, maxBytes: MAX_KEPT_BYTES_PER_SESSION },
  total: { maxItems: MAX_KEPT_TOTAL + REPLAY_LIMITS.total.maxItems, maxBytes: MAX_KEPT_BYTES_TOTAL + REPLAY_LIMITS.total.maxBytes },
};

/** Items written in one statement at most (and about 1 MiB of text). */
const BATCH_ITEMS = 64;
const BATCH_BYTES = 1024 * 1024;
/** Items waiting to be written at most (the database is slow or down): past it, an item reaches only this gateway's streams. */
const MAX_WAITING_WRITES = 1_000;
/** Row ids read after NOTIFYs, remembered so that none is shown twice (a catch-up and a NOTIFY of the same row). */
const RECENT_IDS = 4_096;
/** Sessions streams were opened for (on any gateway) that this one writes the items of, at most: the most recent ones, as the in-process replay. */
const WATCHED_SESSIONS = REPLAY_LIMITS.sessions;
/** How long a stream that opens waits, at most, for the other gateways to be told of it before it answers. */
const ANNOUNCE_WAIT_MS = 1_000;
/** Row ids NOTIFYed and waiting to be read at most (the database is slow): past it, they are read by the next catch-up. */
const MAX_WAITING_READS = 10_000;
/** The wait before writing again what could not be written: doubling from the first to the last. */
const RETRY = { firstMs: 1_000, lastMs: 30_000 };

export interface PgOutboxParts {
  rows: OutboxTable;
  /** This gateway's id (the rows' origin and holder). */
  gateway: string;
  logger: Logger;
  timer: Timer;
  queueLimits?: QueueLimits;
  bounds?: TableBounds;
}

interface Pending {
  sessionKey: string;
  item: OutboxItem;
  keep: boolean;
  bytes: number;
  /** Written again after a failure: only kept, never offered again (the streams here had their chance). */
  again?: boolean;
}

/**
 * The outbox of a fleet (store postgres): every item a session is sent is
 * a row of `picoclaw_outbox`, its id the event id on every gateway's
 * streams, and each new row is NOTIFYed (`<gateway> <id> <session key>`:
 * small, whatever the item's size; NOTIFY caps payloads at 8000 bytes).
 * The gateway that publishes hands the item to its own streams once the
 * row is written; every other gateway with a stream of that session reads
 * the row by its id and hands it to its streams. So a spawned subagent's
 * result that gateway A publishes reaches a stream held on gateway B.
 *
 * A delivery kept for later is a `waiting` row until a gateway whose
 * streams queue it claims it (`held`), a stream shows it (`shown`) or a chat
 * response on any gateway takes it (`taken`): handed out once across the
 * fleet. A stream that closes without showing what it held gives it back
 * (`waiting` again), and what a dead gateway held is claimable again (its
 * LISTEN connection is gone from pg_stat_activity). Rows stay within the
 * table's bounds for the replay (`Last-Event-ID`, answered from the table
 * on any gateway); the oldest go first, and dropping a kept delivery is
 * logged. When the database cannot be written, an item still reaches this
 * gateway's streams (its id the last one known, a dot and a count), and a
 * kept delivery no stream showed waits in memory (bounded) to be written
 * when the database answers again.
 *
 * Sessions that live in one process only (a subagent's, a conversation the
 * client keeps) have an in-process outbox: no other gateway can hold a
 * stream of them.
 *
 * What a session with no stream costs: nothing, as in one process. A notice
 * or a chat response's own delivery is written only for the sessions a
 * stream was opened for (on any gateway; the most recent ones, announced on
 * `picoclaw_watch` and listed in `picoclaw_watched`), where a client may
 * come back to it; and a chat response asks the table for kept deliveries
 * only for the sessions that may have some (every gateway learns of a
 * kept row from its NOTIFY). Until a gateway knows both (start-up, a lost
 * LISTEN connection), it writes and asks for everything.
 */
export class PgOutbox implements SessionOutbox {
  private readonly subscribers = new Map<string, Set<Subscription>>();
  private readonly rows: OutboxTable;
  private readonly bounds: TableBounds;
  private readonly queueLimits: QueueLimits;
  private writes: Pending[] = [];
  /** The batch being written now. */
  private batch: readonly Pending[] = [];
  private writing: Promise<void> | undefined;
  /** Row ids NOTIFYed by other gateways, to be read. */
  private reads: string[] = [];
  private reading: Promise<void> | undefined;
  /** Row ids whose state must change: shown by a stream here, given back by one. */
  private readonly toShow = new Set<string>();
  private readonly toGiveBack = new Set<string>();
  private updating: Promise<void> | undefined;
  /** Kept deliveries the database could not take, per session, written when it answers again. */
  private readonly unwritten = new Map<string, Pending[]>();
  private unwrittenCount = 0;
  private readonly recent = new Set<string>();
  /** The highest row id this gateway knows of; where a catch-up after a lost LISTEN connection starts. */
  private lastSeen = "0";
  private catchUpFrom: string | undefined;
  private sinceFullPrune = { items: Number.POSITIVE_INFINITY, bytes: 0 };
  private readonly toPrune = new Set<string>();
  private pruning: Promise<void> | undefined;
  private fallbacks = 0;
  private troubled: string | undefined;
  private retries = 0;
  private cancelRetry: (() => void) | undefined;
  private closed = false;
  private listening = false;
  private catchingUp = false;
  /** Whether `watchedAnywhere` and `mayKeep` are known (loaded while listening, kept up to date by NOTIFYs). */
  private knowsFleet = false;
  /** Sessions a stream was opened for on any gateway, the most recent last. */
  private readonly watchedAnywhere = new Map<string, true>();
  /** Sessions that may have kept rows, each with a count of the NOTIFYs of such rows (a drain forgets a session only if none came meanwhile). */
  private readonly mayKeep = new Map<string, number>();
  private watchesSincePrune = Number.POSITIVE_INFINITY;

  /** The outbox of sessions that live in this process only. */
  private readonly local: Outbox;

  constructor(private readonly parts: PgOutboxParts) {
    this.rows = parts.rows;
    this.bounds = parts.bounds ?? TABLE_BOUNDS;
    this.queueLimits = parts.queueLimits ?? STREAM_QUEUE;
    this.local = new Outbox(
      {
        dropped: (key, count) => parts.logger.warn(`dropped ${count} undelivered message(s) of ${key}: nobody collected them`),
        overflowed: (key, items, bytes) => this.overflowed(key, items, bytes),
      },
      { queueLimits: this.queueLimits },
    );
  }

  /** Learns the newest row id (a stream that opens starts after it), and which sessions are watched and which have kept rows (start-up). */
  async ready(): Promise<void> {
    this.see(await this.rows.newest());
    await this.learn();
  }

  /** Loads which sessions are watched anywhere and which may have kept rows; from then on NOTIFYs keep both up to date. */
  private async learn(): Promise<void> {
    const [watched, kept] = await Promise.all([this.rows.watchedKeys(WATCHED_SESSIONS), this.rows.keptKeys()]);
    for (const key of watched.reverse()) this.touchWatched(key);
    for (const key of kept) this.mayHaveKept(key);
    this.knowsFleet = this.listening;
  }

  private touchWatched(sessionKey: string): void {
    this.watchedAnywhere.delete(sessionKey);
    this.watchedAnywhere.set(sessionKey, true);
    if (this.watchedAnywhere.size > WATCHED_SESSIONS) this.watchedAnywhere.delete(this.watchedAnywhere.keys().next().value as string);
  }

  private mayHaveKept(sessionKey: string): void {
    this.mayKeep.set(sessionKey, (this.mayKeep.get(sessionKey) ?? 0) + 1);
    // Sessions whose kept rows other gateways handed out stay here until this one drains them: past the table's
    // own bound, the list is read again from the table (asking it for everything meanwhile).
    if (this.mayKeep.size > this.bounds.total.maxItems && this.knowsFleet) {
      this.knowsFleet = false;
      this.mayKeep.clear();
      this.learn().catch((error: unknown) => this.trouble("which sessions have deliveries kept could not be read", error));
    }
  }

  /** A session a stream was opened for on another gateway (NOTIFYed): its items are written from now on. */
  watchNotified(sessionKey: string): void {
    if (sessionKey !== "") this.touchWatched(sessionKey);
  }

  /** Tells the fleet a stream of the session opened (at most ANNOUNCE_WAIT_MS waited for). */
  private announce(sessionKey: string): Promise<void> {
    const known = this.watchedAnywhere.has(sessionKey);
    this.touchWatched(sessionKey);
    const told = this.rows.watch(sessionKey).then(
      () => this.pruneWatched(),
      (error: unknown) => this.trouble("a stream could not be announced to the other gateways; they write every item meanwhile", error),
    );
    // Known to every gateway already (a stream of it opened before): no need to wait.
    if (known && this.knowsFleet) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const cancel = this.parts.timer(ANNOUNCE_WAIT_MS, resolve);
      void told.then(() => {
        cancel();
        resolve();
      });
    });
  }

  private pruneWatched(): void {
    if (++this.watchesSincePrune < WATCHED_SESSIONS / 16) return;
    this.watchesSincePrune = 0;
    this.rows.pruneWatched(WATCHED_SESSIONS).catch((error: unknown) => this.trouble("the list of watched sessions could not be kept within its bound", error));
  }

  /**
   * A stream starts with the session's kept deliveries and the rows after
   * its client's last id, or after the newest row this gateway knows of
   * (what is written while it opens is not missed, and comes in order).
   */
  subscribe(sessionKey: string, options: SubscribeOptions = {}): SessionStream {
    if (here(sessionKey)) return this.local.subscribe(sessionKey, options);
    const subscription = this.open(sessionKey, true);
    subscription.ready = this.announce(sessionKey);
    void this.start(subscription, options.after?.split(".")[0] ?? this.lastSeen);
    return subscription;
  }

  feed(sessionKey: string, subscriber: (item: OutboxItem) => void): () => void {
    if (here(sessionKey)) return this.local.feed(sessionKey, subscriber);
    return pump(this.subscribe(sessionKey), subscriber);
  }

  publish(sessionKey: string, item: OutboxItem, keep = false): void {
    if (here(sessionKey)) {
      this.local.publish(sessionKey, item, keep);
      return;
    }
    const pending: Pending = { sessionKey, item, keep: keep && item.type === "delivery", bytes: bytesOf(item) };
    // A notice (or a chat response's own delivery) of a session no stream anywhere was opened for: nobody would read it.
    if (!pending.keep && !this.writesNoticesOf(sessionKey)) return;
    if (this.closed || this.writes.length >= MAX_WAITING_WRITES) {
      this.unsaved([pending]);
      return;
    }
    this.writes.push(pending);
    this.startWriting();
  }

  async drain(sessionKey: string): Promise<Delivery[]> {
    if (here(sessionKey)) return this.local.drain(sessionKey);
    await this.flushKept(sessionKey);
    let rows: Row[] = [];
    const notices = this.mayKeep.get(sessionKey);
    try {
      // No kept row of it anywhere, as far as the NOTIFYs tell: nothing to ask.
      if (!this.knowsFleet || notices !== undefined) {
        const taken = await this.rows.take(sessionKey);
        rows = taken.rows;
        if (!taken.more && this.mayKeep.get(sessionKey) === notices) this.mayKeep.delete(sessionKey);
      }
    } catch (error) {
      this.trouble(`the deliveries kept for ${sessionKey} in the database could not be read; they wait for the next answer`, error);
    }
    return [...rows.map((row) => deliveryOf(row.item)), ...this.takeUnwritten(sessionKey).map((p) => deliveryOf(p.item))];
  }

  async clearSession(sessionKey: string): Promise<void> {
    if (here(sessionKey)) return this.local.clearSession(sessionKey);
    await this.flush();
    this.takeUnwritten(sessionKey);
    await this.rows.forget(sessionKey);
  }

  /** Whether this gateway writes the session's notices: a stream of it was opened, here or (as it heard) on another gateway, or it does not know. */
  writesNoticesOf(sessionKey: string): boolean {
    return !this.knowsFleet || this.watchedAnywhere.has(sessionKey) || this.watched(sessionKey);
  }

  /** Whether a stream of the session is open on this gateway. */
  watched(sessionKey: string): boolean {
    return (this.subscribers.get(sessionKey)?.size ?? 0) > 0;
  }

  /** A NOTIFY of a new row: read it when this gateway has a stream of its session (its own rows it handed out already). */
  notified(payload: string): void {
    const [gateway, id, state, ...rest] = payload.split(" ");
    if (!gateway || !id || !/^[0-9]{1,19}$/.test(id)) return;
    const key = rest.join(" ");
    this.see(id);
    if (state === "w" || state === "h") this.mayHaveKept(key);
    if (gateway === this.parts.gateway || !this.watched(key)) return;
    if (this.reads.length >= MAX_WAITING_READS) {
      this.catchUpFrom ??= String(BigInt(id) - 1n);
      this.retryLater();
      return;
    }
    this.reads.push(id);
    this.startReading();
  }

  /** The LISTEN connection went: what is NOTIFYed meanwhile is read once it is back. */
  lost(): void {
    this.listening = false;
    this.knowsFleet = false;
    this.catchUpFrom ??= this.lastSeen;
  }

  /** The LISTEN connection is up (again): rows other gateways wrote meanwhile for sessions with a stream here are read; what waits is written. */
  listened(again = false): void {
    this.listening = true;
    this.retries = 0;
    this.retryNow();
    // What changed while it was not listening is read again (start-up reads it in `ready`).
    if (again) this.learn().catch((error: unknown) => this.trouble("which sessions are watched and have kept deliveries could not be read", error));
  }

  /** Reads the rows other gateways wrote after `catchUpFrom` for the sessions with a stream here (NOTIFYs this gateway missed). */
  private async catchUp(): Promise<void> {
    const from = this.catchUpFrom;
    const keys = [...this.subscribers.keys()];
    if (from === undefined || this.catchingUp) return;
    this.catchUpFrom = undefined;
    if (keys.length === 0) return;
    this.catchingUp = true;
    try {
      for (const row of await this.rows.claimAfter(from, keys)) this.deliver(row);
    } catch (error) {
      this.catchUpFrom = from;
      this.trouble("what other gateways sent while this one was not listening could not be read", error);
      this.retryLater();
    } finally {
      this.catchingUp = false;
    }
  }

  /** Writes what waits to be written (before the database's pool ends). */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelRetry?.();
    await this.flush();
    await this.updating;
    await this.pruning;
  }

  /** Resolves once what was published before is written (or could not be). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Resolves once the deliveries to keep published before for the session are written (or could not be): what drain and a new stream claim. */
  private async flushKept(sessionKey: string): Promise<void> {
    const ours = (p: Pending) => p.keep && p.sessionKey === sessionKey;
    while (this.writing && (this.writes.some(ours) || this.batch.some(ours))) await this.writing;
  }

  private open(sessionKey: string, catchingUp: boolean): Subscription {
    const subscription = new Subscription(
      sessionKey,
      this.queueLimits,
      (s) => this.detach(s),
      (s, left, bytes, reason) => this.takeBack(s, left, bytes, reason),
      catchingUp,
    );
    let set = this.subscribers.get(sessionKey);
    if (!set) this.subscribers.set(sessionKey, (set = new Set()));
    set.add(subscription);
    return subscription;
  }

  /** What a new stream starts with: the kept deliveries (now held here), what its client missed, what waits in memory. */
  private async start(subscription: Subscription, after: string): Promise<void> {
    await this.flushKept(subscription.sessionKey);
    let rows: Row[] = [];
    try {
      rows = await this.rows.opening(subscription.sessionKey, after);
    } catch (error) {
      this.trouble(`the deliveries kept for ${subscription.sessionKey} in the database could not be read; the stream starts without them`, error);
    }
    const first = rows.map((row) => this.envelope(row));
    const unwritten = this.takeUnwritten(subscription.sessionKey).map((p) => this.fallback(p));
    if (!subscription.catchUp([...inIdOrder(first), ...unwritten])) this.keepBack(subscription.sessionKey, [...first, ...unwritten]);
  }

  private detach(subscription: Subscription): void {
    const set = this.subscribers.get(subscription.sessionKey);
    if (!set?.delete(subscription)) return;
    if (set.size === 0) this.subscribers.delete(subscription.sessionKey);
  }

  private takeBack(subscription: Subscription, left: readonly Envelope[], bytes: number, reason: CloseReason): void {
    if (reason === "overflow") this.overflowed(subscription.sessionKey, left.length, bytes);
    this.keepBack(subscription.sessionKey, left);
  }

  private overflowed(sessionKey: string, items: number, bytes: number): void {
    this.parts.logger.warn(
      `closed an event stream of ${sessionKey}: its client stopped reading (${items} item(s), ${bytes} bytes queued); its deliveries are kept`,
    );
  }

  /** Deliveries this gateway held that no stream showed and none holds now: waiting again (in the database, or in memory if they never reached it). */
  private keepBack(sessionKey: string, envelopes: readonly Envelope[]): void {
    for (const envelope of envelopes) {
      if (!envelope.keep || envelope.holders > 0 || envelope.shown) continue;
      if (envelope.id.includes(".")) this.keepUnwritten({ sessionKey, item: envelope.item, keep: true, bytes: envelope.bytes });
      else this.toGiveBack.add(envelope.id);
    }
    if (this.toGiveBack.size > 0) this.startUpdating();
  }

  private offer(sessionKey: string, envelope: Envelope): void {
    for (const subscription of [...(this.subscribers.get(sessionKey) ?? [])]) subscription.offer(envelope);
  }

  /** An envelope for a row: held here when this gateway claimed it; a delivery that may still be kept is recorded as shown when a stream shows it. */
  private envelope(row: Row): Envelope {
    const keepable = row.item.type === "delivery" && row.state !== "live";
    return envelopeOf(row.id, row.item, row.mine, row.bytes, keepable ? (e) => this.shownHere(e) : undefined);
  }

  /** A row another gateway wrote, read after its NOTIFY (or a catch-up): to this gateway's streams, unless a chat response took it. */
  private deliver(row: Row): void {
    if (this.recent.has(row.id)) {
      // Read again, and this time claimed: the streams here have it already, as it was; held by none of them, it goes back.
      if (row.mine) {
        this.toGiveBack.add(row.id);
        this.startUpdating();
      }
      return;
    }
    // Waiting and not claimed: written a moment after the claim (its NOTIFY comes next), or taken by a chat response.
    if (!row.mine && row.state === "waiting") return;
    this.remember(row.id);
    if (!row.mine && row.state === "taken") return;
    const envelope = this.envelope(row);
    this.offer(row.sessionKey, envelope);
    if (row.mine) this.keepBack(row.sessionKey, [envelope]);
  }

  private shownHere(envelope: Envelope): void {
    this.toShow.add(envelope.id);
    this.toGiveBack.delete(envelope.id);
    this.startUpdating();
  }

  private startWriting(): void {
    if (this.writing) return;
    this.writing = (async () => {
      // Whatever is published in this tick goes in the same statement.
      await Promise.resolve();
      while (this.writes.length > 0) {
        this.batch = this.nextBatch();
        await this.write(this.batch);
      }
    })().finally(() => {
      this.batch = [];
      this.writing = undefined;
      if (this.writes.length > 0) this.startWriting();
    });
  }

  private nextBatch(): Pending[] {
    let bytes = 0;
    let count = 0;
    while (count < this.writes.length && count < BATCH_ITEMS && (count === 0 || bytes + this.writes[count]!.bytes <= BATCH_BYTES)) {
      bytes += this.writes[count]!.bytes;
      count++;
    }
    return this.writes.splice(0, count);
  }

  private async write(batch: readonly Pending[]): Promise<void> {
    // A delivery for a session with a stream here is held by this gateway from the start: no chat response elsewhere takes it meanwhile.
    const rows: NewRow[] = batch.map((p) => ({
      sessionKey: p.sessionKey,
      item: p.item,
      bytes: p.bytes,
      state: !p.keep ? "live" : this.watched(p.sessionKey) ? "held" : "waiting",
    }));
    let ids: string[];
    try {
      ids = await this.rows.insert(rows);
    } catch (error) {
      this.trouble("deliveries could not be written to the session database; they reach only this gateway's streams meanwhile", error);
      this.unsaved(batch);
      this.retryLater();
      return;
    }
    this.fine();
    batch.forEach((p, i) => {
      const id = ids[i]!;
      this.see(id);
      if (rows[i]!.state !== "live") this.mayHaveKept(p.sessionKey);
      const envelope = this.envelope({ id, sessionKey: p.sessionKey, item: p.item, bytes: p.bytes, state: rows[i]!.state, mine: rows[i]!.state === "held" });
      this.offer(p.sessionKey, envelope);
      if (envelope.keep) this.keepBack(p.sessionKey, [envelope]);
    });
    this.prune(batch);
  }

  /**
   * Keeps the table within its bounds, beside the writes (one prune at a
   * time): the sessions just written to, and the whole table each time this
   * gateway wrote a sixteenth of its totals.
   */
  private prune(batch: readonly Pending[]): void {
    const since = this.sinceFullPrune;
    since.items += batch.length;
    since.bytes += batch.reduce((sum, p) => sum + p.bytes, 0);
    for (const p of batch) this.toPrune.add(p.sessionKey);
    if (this.pruning) return;
    this.pruning = (async () => {
      while (this.toPrune.size > 0) {
        const keys = [...this.toPrune];
        this.toPrune.clear();
        const written = this.sinceFullPrune;
        const full = written.items >= this.bounds.total.maxItems / 16 || written.bytes >= this.bounds.total.maxBytes / 16;
        try {
          this.reportDropped(await this.rows.prune(keys, this.bounds));
          if (full) {
            this.sinceFullPrune = { items: 0, bytes: 0 };
            this.reportDropped(await this.rows.pruneAll(this.bounds));
          }
        } catch (error) {
          this.trouble("the outbox table could not be kept within its bounds", error);
          return;
        }
      }
    })().finally(() => {
      this.pruning = undefined;
    });
  }

  private reportDropped(dropped: ReadonlyMap<string, number>): void {
    for (const [key, count] of dropped) this.parts.logger.warn(`dropped ${count} undelivered message(s) of ${key}: nobody collected them`);
  }

  /** Items the database could not take: to this gateway's streams now; a kept delivery none of them holds waits in memory. */
  private unsaved(batch: readonly Pending[]): void {
    for (const p of batch) {
      if (p.again) {
        this.keepUnwritten(p);
        continue;
      }
      const envelope = this.fallback(p);
      this.offer(p.sessionKey, envelope);
      if (envelope.keep) this.keepBack(p.sessionKey, [envelope]);
    }
  }

  /** An envelope for an item that has no row: its id the last row id known, a dot and a count. */
  private fallback(p: Pending): Envelope {
    return envelopeOf(`${this.lastSeen}.${++this.fallbacks}`, p.item, p.keep, p.bytes);
  }

  private keepUnwritten(p: Pending): void {
    let list = this.unwritten.get(p.sessionKey);
    if (!list) this.unwritten.set(p.sessionKey, (list = []));
    list.push({ ...p, again: true });
    this.unwrittenCount++;
    let over = 0;
    while (list.length - over > MAX_KEPT_PER_SESSION) over++;
    if (over > 0) this.dropUnwritten(p.sessionKey, over);
    while (this.unwrittenCount > MAX_KEPT_TOTAL) this.dropUnwritten(this.unwritten.keys().next().value as string, 1);
    this.retryLater();
  }

  private dropUnwritten(sessionKey: string, count: number): void {
    const list = this.unwritten.get(sessionKey) ?? [];
    const gone = list.splice(0, count);
    this.unwrittenCount -= gone.length;
    if (list.length === 0) this.unwritten.delete(sessionKey);
    if (gone.length > 0) this.parts.logger.warn(`dropped ${gone.length} undelivered message(s) of ${sessionKey}: nobody collected them`);
  }

  private takeUnwritten(sessionKey: string): Pending[] {
    const list = this.unwritten.get(sessionKey) ?? [];
    this.unwritten.delete(sessionKey);
    this.unwrittenCount -= list.length;
    return list.map((p) => ({ ...p, again: false }));
  }

  /** Writes what waits in memory after a while, waiting longer after each failure. */
  private retryLater(): void {
    const waiting = this.unwrittenCount + this.toShow.size + this.toGiveBack.size > 0 || this.catchUpFrom !== undefined;
    if (this.cancelRetry || this.closed || !waiting) return;
    const ms = Math.min(RETRY.lastMs, RETRY.firstMs * 2 ** Math.min(this.retries, 10));
    this.retries++;
    this.cancelRetry = this.parts.timer(ms, () => {
      this.cancelRetry = undefined;
      this.retryNow();
    });
  }

  private retryNow(): void {
    this.cancelRetry?.();
    this.cancelRetry = undefined;
    if (this.closed) return;
    for (const key of [...this.unwritten.keys()]) {
      const list = this.unwritten.get(key)!;
      this.unwritten.delete(key);
      this.unwrittenCount -= list.length;
      this.writes.push(...list);
    }
    if (this.writes.length > 0) this.startWriting();
    if (this.toShow.size + this.toGiveBack.size > 0) this.startUpdating();
    if (this.listening && this.catchUpFrom !== undefined) void this.catchUp();
  }

  private startReading(): void {
    if (this.reading) return;
    this.reading = (async () => {
      await Promise.resolve();
      while (this.reads.length > 0) {
        const ids = this.reads.splice(0, 256);
        try {
          for (const row of await this.rows.claimByIds(ids)) this.deliver(row);
        } catch (error) {
          // Read again by the catch-up once the database answers (the LISTEN connection goes with it, or the next NOTIFY finds it).
          this.catchUpFrom ??= String(BigInt(ids.reduce((a, b) => (BigInt(a) < BigInt(b) ? a : b))) - 1n);
          this.trouble("deliveries other gateways wrote could not be read", error);
          this.retryLater();
        }
      }
    })().finally(() => {
      this.reading = undefined;
      if (this.reads.length > 0) this.startReading();
    });
  }

  private startUpdating(): void {
    if (this.updating) return;
    this.updating = (async () => {
      await Promise.resolve();
      while (this.toShow.size + this.toGiveBack.size > 0) {
        const shown = [...this.toShow];
        const back = [...this.toGiveBack];
        this.toShow.clear();
        this.toGiveBack.clear();
        try {
          if (shown.length > 0) await this.rows.shown(shown);
          if (back.length > 0) await this.rows.giveBack(back);
        } catch (error) {
          for (const id of shown) this.toShow.add(id);
          for (const id of back) if (!this.toShow.has(id)) this.toGiveBack.add(id);
          this.trouble("what this gateway's streams showed could not be recorded in the session database; it is tried again", error);
          this.retryLater();
          return;
        }
      }
    })().finally(() => {
      this.updating = undefined;
    });
  }

  private see(id: string): void {
    if (BigInt(id) > BigInt(this.lastSeen)) this.lastSeen = id;
  }

  private remember(id: string): void {
    this.recent.add(id);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value as string);
  }

  /** A failure, logged once until things work again. */
  private trouble(what: string, error: unknown): void {
    if (this.troubled === what) return;
    this.troubled = what;
    this.parts.logger.warn(`${what}: ${messageOf(error)}`);
  }

  private fine(): void {
    this.troubled = undefined;
    this.retries = 0;
  }
}

/** A session that lives in this process only (a subagent's, a conversation the client keeps), or a key that is not one of ours. */
function here(sessionKey: string): boolean {
  return isTransientKey(sessionKey) || parseSessionKey(sessionKey) === null;
}
