import type { PoolClient } from "pg";
import { messageOf } from "../../errors.js";
import type { Timer } from "../../signals.js";
import { isTransientKey, parseSessionKey } from "../key.js";
import { KeyQueue } from "../key-queue.js";
import type { TurnOrder } from "../turn-order.js";
import type { PgDatabase } from "./database.js";
import { StoreUnavailableError, storeError } from "./errors.js";

/** The first half of every session lock's key (pg_advisory_lock(int, int)): the second is hashtext of the session key. */
export const SESSION_LOCK_CLASS = 1_885_563_459;

export interface TurnLockOptions {
  /** Sessions whose turns run at once in this process (session.postgres.lock_connections). */
  connections: number;
  /** Time a turn waits for its lock, a connection for it included (session.postgres.lock_timeout_ms). */
  timeoutMs: number;
  timer: Timer;
  now: () => number;
}

/**
 * The order of turns across every gateway on one database: a turn of a
 * conversation runs while it holds the session's advisory lock
 * (`pg_advisory_lock` on a hash of its key), taken on a connection of its
 * own and let go when the turn ends. The database lets go of it when the
 * connection ends (the process died), never a timer's guess. Turns of one
 * session in this process queue here first (in the order asked, one
 * connection per session), so only the first of them waits in the
 * database. Subagents' and one-message sessions live in this process only:
 * their order is the in-process queue's.
 */
export class PgTurnOrder implements TurnOrder {
  private readonly local = new KeyQueue();
  private readonly slots: Slots;

  constructor(
    private readonly db: PgDatabase,
    private readonly opts: TurnLockOptions,
  ) {
    this.slots = new Slots(opts.connections, opts.timer);
  }

  run<T>(sessionKey: string, work: () => Promise<T>): Promise<T> {
    if (isTransientKey(sessionKey) || parseSessionKey(sessionKey) === null) return this.local.run(sessionKey, work);
    return this.local.run(sessionKey, () => this.locked(sessionKey, work));
  }

  get size(): number {
    return this.local.size;
  }

  /** Whether another gateway's turn of the session holds its lock now: the lock is tried, and let go at once if it was free. */
  async heldElsewhere(sessionKey: string): Promise<boolean> {
    if (isTransientKey(sessionKey) || parseSessionKey(sessionKey) === null) return false;
    const client = await this.db.lockClient(`looking at the lock of ${sessionKey}`);
    let broken: Error | undefined;
    try {
      const { rows } = await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock($1, hashtext($2)) AS got", [SESSION_LOCK_CLASS, sessionKey]);
      if (!rows[0]?.got) return true;
      await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [SESSION_LOCK_CLASS, sessionKey]);
      return false;
    } catch (error) {
      broken = error as Error;
      throw storeError(`looking at the lock of ${sessionKey}`, error);
    } finally {
      client.release(broken);
    }
  }

  private async locked<T>(sessionKey: string, work: () => Promise<T>): Promise<T> {
    const { timeoutMs, now } = this.opts;
    const deadline = now() + timeoutMs;
    const busy = (why: string) =>
      new StoreUnavailableError(`the turn of ${sessionKey} waited ${timeoutMs} ms for ${why} (session.postgres.lock_timeout_ms); try again later`);
    const freeSlot = await this.slots.take(timeoutMs, () => busy(`one of this gateway's session.postgres.lock_connections`));
    let client: PoolClient | undefined;
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    try {
      client = await this.db.lockClient(`taking the lock of ${sessionKey}`);
      client.on("error", onError);
      try {
        await client.query("SELECT set_config('lock_timeout', $1, false)", [`${Math.max(1, deadline - now())}ms`]);
        await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [SESSION_LOCK_CLASS, sessionKey]);
      } catch (error) {
        if ((error as { code?: unknown }).code === "55P03") throw busy("its session's lock: a turn of it holds it, on another gateway");
        broken = error as Error;
        throw storeError(`taking the lock of ${sessionKey}`, error);
      }
      try {
        return await work();
      } finally {
        await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [SESSION_LOCK_CLASS, sessionKey]).catch((error: unknown) => {
          // The connection is closed instead: its end lets go of the lock.
          broken ??= new Error(messageOf(error));
        });
      }
    } finally {
      client?.off("error", onError);
      client?.release(broken);
      freeSlot();
    }
  }
}

/** At most `size` holders at once; the others wait, in order, up to a time limit each. */
class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly timer: Timer,
  ) {}

  async take(timeoutMs: number, late: () => Error): Promise<() => void> {
    if (this.used < this.size) {
      this.used++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        cancel();
        resolve();
      };
      const cancel = this.timer(timeoutMs, () => {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(late());
      });
      this.waiting.push(wake);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      // Handed straight to the next waiter: the count stays.
      if (next) next();
      else this.used--;
    };
  }
}
