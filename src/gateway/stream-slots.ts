/** Session event streams open at once at most, by default (gateway.limits.max_streams). */
export const DEFAULT_MAX_STREAMS = 500;

/**
 * How many long-lived streams may be open at once: a stream takes a slot
 * when it opens and gives it back when it ends, however it ends. Past the
 * cap a new stream is refused, so streams alone can never fill the
 * connection cap (the health check and every other request keep room).
 */
export class StreamSlots {
  private open = 0;

  constructor(readonly max: number) {}

  /** Takes a slot; false when all are taken. */
  take(): boolean {
    if (this.open >= this.max) return false;
    this.open++;
    return true;
  }

  give(): void {
    if (this.open > 0) this.open--;
  }

  /** Streams open now (tests, metrics). */
  get size(): number {
    return this.open;
  }
}
