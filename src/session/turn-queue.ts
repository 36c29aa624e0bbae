import { AbortedError, PicoclawError, RequestError, abortReason } from "../errors.js";
import type { TurnOrder } from "./turn-order.js";

/** How much may wait for one session's turn order (gateway.limits.max_queued_turns, max_queued_bytes). */
export interface QueueLimits {
  /** Turns waiting at most (the running one not counted). */
  maxTurns: number;
  /** UTF-8 bytes of their input (texts, images) waiting at most. */
  maxBytes: number;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = { maxTurns: 32, maxBytes: 4 * 1024 * 1024 };

/** What a caller says of the work it queues. */
export interface Waiting {
  /** Counted against the session's limits while it waits (a user's message): past them it is refused. Work the gateway queues itself (a spawned child's result, a clear) is never refused. */
  bounded?: boolean;
  /** Bytes of input it holds while it waits. */
  bytes?: number;
  /** Its client: when it aborts while the work waits, the work leaves the queue and is never run. */
  signal?: AbortSignal;
  /** Told `true` when the work has to wait (the session's turn before it runs), `false` once it stops waiting (it runs, or left). */
  onWaiting?: (waiting: boolean) => void;
}

interface Entry {
  /** Dropped once the work leaves the queue (run, or taken out): what it holds is let go of then. */
  work: (() => Promise<unknown>) | undefined;
  bytes: number;
  bounded: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Told when it stops waiting, if it was told it waits. */
  onWaiting: ((waiting: boolean) => void) | undefined;
}

/** One session's queue: what waits, in order, and whether its head is with the turn order. */
interface Line {
  waiting: Entry[];
  /** Bounded turns waiting, and their bytes. */
  turns: number;
  bytes: number;
  busy: boolean;
}

/**
 * The per-session queue in front of a turn order: work on one session is
 * handed to the order one at a time, in the order asked, so what waits is
 * here, counted and bounded. A user's turn that would wait past the
 * session's limits (turns, or bytes of input) is refused at once with 429
 * `too_many_queued_turns` naming the limit; one whose client goes away while
 * it waits leaves the queue at once (its promise rejects with the abort's
 * reason) and is never run, so nothing holds its body. Idle sessions cost
 * nothing: a session's line is forgotten when it empties.
 */
export class TurnQueue implements TurnOrder {
  private readonly lines = new Map<string, Line>();
  private totalBytes = 0;

  constructor(
    private readonly order: TurnOrder,
    private readonly limits: QueueLimits = DEFAULT_QUEUE_LIMITS,
  ) {}

  run<T>(sessionKey: string, work: () => Promise<T>, waiting: Waiting = {}): Promise<T> {
    const bounded = waiting.bounded === true;
    const bytes = bounded ? (waiting.bytes ?? 0) : 0;
    let line = this.lines.get(sessionKey);
    if (bounded && line?.busy) this.refuseOver(sessionKey, line, bytes);
    const signal = waiting.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (!line) {
      line = { waiting: [], turns: 0, bytes: 0, busy: false };
      this.lines.set(sessionKey, line);
    }
    const target = line;
    return new Promise<T>((resolve, reject) => {
      const entry: Entry = { work, bytes, bounded, resolve: resolve as (value: unknown) => void, reject, signal, onAbort: undefined, onWaiting: undefined };
      target.waiting.push(entry);
      if (bounded) {
        target.turns++;
        target.bytes += bytes;
        this.totalBytes += bytes;
      }
      if (signal) {
        entry.onAbort = () => this.takeOut(sessionKey, target, entry);
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.next(sessionKey, target);
      // Still in the line: it waits for the work before it.
      if (entry.work && waiting.onWaiting) {
        entry.onWaiting = waiting.onWaiting;
        entry.onWaiting(true);
      }
    });
  }

  /** Keys with work queued or running (for tests and metrics). */
  get size(): number {
    return this.lines.size;
  }

  /** Bytes of input the bounded turns waiting hold, every session together. */
  get waitingBytes(): number {
    return this.totalBytes;
  }

  /** Turns waiting for the session (the running one not counted), and the bytes they hold. */
  waitingOf(sessionKey: string): { turns: number; bytes: number } {
    const line = this.lines.get(sessionKey);
    return { turns: line?.turns ?? 0, bytes: line?.bytes ?? 0 };
  }

  heldElsewhere(sessionKey: string): Promise<boolean> {
    return this.order.heldElsewhere ? this.order.heldElsewhere(sessionKey) : Promise.resolve(false);
  }

  private refuseOver(sessionKey: string, line: Line, bytes: number): void {
    if (line.turns + 1 > this.limits.maxTurns) {
      throw new RequestError(
        "too_many_queued_turns",
        `${line.turns} turns of session ${sessionKey} wait already, the most gateway.limits.max_queued_turns lets wait; try again once they have run`,
      );
    }
    if (line.bytes + bytes > this.limits.maxBytes) {
      throw new RequestError(
        "too_many_queued_turns",
        `the turns waiting in session ${sessionKey} hold ${line.bytes} bytes, and this one ${bytes} more: over gateway.limits.max_queued_bytes (${this.limits.maxBytes}); try again once they have run`,
      );
    }
  }

  /** Hands the line's next work to the order, unless its head is there already. */
  private next(sessionKey: string, line: Line): void {
    if (line.busy) return;
    const entry = line.waiting.shift();
    if (!entry) {
      if (this.lines.get(sessionKey) === line) this.lines.delete(sessionKey);
      return;
    }
    line.busy = true;
    this.leave(line, entry);
    const work = entry.work!;
    entry.work = undefined;
    this.order
      .run(sessionKey, work)
      .then(entry.resolve, entry.reject)
      .finally(() => {
        line.busy = false;
        this.next(sessionKey, line);
      });
  }

  /** A waiting entry whose client went away: out of the line, its work dropped unrun. */
  private takeOut(sessionKey: string, line: Line, entry: Entry): void {
    const at = line.waiting.indexOf(entry);
    if (at < 0) return;
    line.waiting.splice(at, 1);
    this.leave(line, entry);
    entry.work = undefined;
    const reason = abortReason(entry.signal!);
    // A client's own abort (a DOMException) says nothing of where it happened.
    entry.reject(
      reason instanceof PicoclawError ? reason : new AbortedError("the turn left the queue unrun: its client went away while it waited for its session"),
    );
    if (!line.busy && line.waiting.length === 0 && this.lines.get(sessionKey) === line) this.lines.delete(sessionKey);
  }

  /** The entry no longer waits: it stops counting, and its abort no longer takes it out. */
  private leave(line: Line, entry: Entry): void {
    if (entry.bounded) {
      line.turns--;
      line.bytes -= entry.bytes;
      this.totalBytes -= entry.bytes;
    }
    if (entry.onAbort) entry.signal!.removeEventListener("abort", entry.onAbort);
    entry.onAbort = undefined;
    entry.onWaiting?.(false);
    entry.onWaiting = undefined;
  }
}
