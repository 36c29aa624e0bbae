import type { Delivery } from "./transcript.js";

/** Deliveries shown from the page's own requests that the session's event stream has not echoed yet, at most. */
const MAX_EXPECTED = 200;

const keyOf = (delivery: Delivery) => `${delivery.from}\u0000${delivery.text}`;

/**
 * The session's event stream also carries what the page's own messages
 * deliver (it shows everything delivered to the session). The page shows
 * its own from its own answers, so each of those is expected once on the
 * event stream and dropped there. While one of its requests is under way, a
 * delivery from the event stream that is not yet known as its own is held,
 * and shown once the request ended without claiming it: it was another
 * turn's (a background subagent's answer).
 */
export class Echoes {
  private expected: string[] = [];
  private held: Delivery[] = [];
  private ownRequests = 0;

  /** One of the page's own requests starts. */
  begin(): void {
    this.ownRequests++;
  }

  /** The page showed this delivery from its own request. */
  shown(delivery: Delivery): void {
    const key = keyOf(delivery);
    const at = this.held.findIndex((held) => keyOf(held) === key);
    if (at >= 0) {
      this.held.splice(at, 1);
      return;
    }
    this.expected.push(key);
    if (this.expected.length > MAX_EXPECTED) this.expected.shift();
  }

  /** A delivery arrived on the event stream: whether to show it now. */
  arrived(delivery: Delivery): boolean {
    const at = this.expected.indexOf(keyOf(delivery));
    if (at >= 0) {
      this.expected.splice(at, 1);
      return false;
    }
    if (this.ownRequests > 0) {
      this.held.push(delivery);
      return false;
    }
    return true;
  }

  /** One of the page's own requests ended; returns the held deliveries that were not its own, once none is under way. */
  end(): Delivery[] {
    this.ownRequests = Math.max(0, this.ownRequests - 1);
    if (this.ownRequests > 0) return [];
    const others = this.held;
    this.held = [];
    return others;
  }

  reset(): void {
    this.expected = [];
    this.held = [];
    this.ownRequests = 0;
  }
}
