/** How long to wait before the next restart of a server. */
export interface BackoffOptions {
  /** The ceiling of the first wait, in ms (default 500). */
  initialMs?: number;
  /** The largest ceiling, in ms (default 30 000). */
  maxMs?: number;
  /** A number in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * Exponential backoff with jitter: the n-th wait (from 0) is drawn between
 * half and all of min(maxMs, initialMs × 2^n), so servers that fail together
 * do not come back in lock step.
 */
export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 500;
    this.maxMs = Math.max(opts.maxMs ?? 30_000, this.initialMs);
    this.random = opts.random ?? Math.random;
  }

  /** The next wait in ms. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    if (ceiling < this.maxMs) this.attempt++;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** Back to the shortest wait (after the server stayed up for a while). */
  reset(): void {
    this.attempt = 0;
  }
}
