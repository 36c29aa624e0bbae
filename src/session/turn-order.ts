/**
 * The per-session order of turns: work on one session key runs one at a
 * time, in the order asked; other keys run in parallel. A port: the
 * in-process implementation is a KeyQueue (key-queue.ts); a store that
 * several gateways share replaces it with a lock they all take (so turns of
 * one session run one at a time across all of them) without the runtime
 * knowing.
 */
export interface TurnOrder {
  /** Runs `work` after everything asked before it for `sessionKey` (whether that failed or not). */
  run<T>(sessionKey: string, work: () => Promise<T>): Promise<T>;
  /** Keys with work queued or running in this process (tests, metrics). */
  readonly size: number;
  /**
   * Whether a turn of the session runs in another process now (an order
   * several gateways share can tell: its lock is held; an in-process one has
   * no other process, and leaves this out).
   */
  heldElsewhere?(sessionKey: string): Promise<boolean>;
}
