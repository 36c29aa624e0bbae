/**
 * Pairing of chat users the gateway does not know yet (a channel with
 * `dm_policy: "pairing"`): such a user gets a short code, the owner
 * approves it (`picoclaw pairing approve <CODE>`, `POST
 * /v1/pairing/<code>/approve`), and from then on the user is let in as if
 * listed in `allow_from`. The runtime keeps the codes and the approved users
 * durably (the feature state's `pairings` namespace); a channel gets this
 * as the host capability `pairings`. Nothing a user wrote is kept here:
 * only channel names, user ids, an optional user name, and times.
 */

/** How a channel pairs (from its entry's keys). */
export interface PairingRules {
  /** How long a code is good for (pairing_code_ttl_minutes). */
  ttlMs: number;
  /** Codes waiting at most in the channel (pairing_max_pending); past it no code is made. */
  maxPending: number;
}

/** A user as a channel names them: their id on the chat app, and a name the owner may recognise (a username). */
export interface PairingUser {
  id: string;
  name?: string | undefined;
}

/** A code waiting for the owner. */
export interface PendingPairing {
  readonly code: string;
  readonly channel: string;
  readonly userId: string;
  readonly userName?: string | undefined;
  readonly requestedAt: number;
  readonly expiresAt: number;
}

/** A user the owner let in. */
export interface PairedUser {
  readonly channel: string;
  readonly userId: string;
  readonly userName?: string | undefined;
  readonly approvedAt: number;
}

/**
 * What asking for a user leads to: `approved` (let them in); `pending` (their
 * code: a new one, or the one they have, with `reply` saying whether to tell
 * them again now: repeats are answered at most once per PAIRING_REMIND_MS);
 * `full` (the channel has as many codes waiting as it may: nothing is made).
 */
export type PairingCheck =
  | { readonly kind: "approved" }
  | { readonly kind: "pending"; readonly code: string; readonly expiresAt: number; readonly created: boolean; readonly reply: boolean }
  | { readonly kind: "full" };

export interface Pairings {
  /** Whether the owner let this user of the channel in. */
  isApproved(channel: string, userId: string): Promise<boolean>;
  /** A user the channel does not know wrote: their code (made when they have none), or `approved`, or `full`. */
  request(channel: string, user: PairingUser, rules: PairingRules): Promise<PairingCheck>;
  /** Codes waiting (expired ones are dropped first), oldest first. */
  pending(): Promise<PendingPairing[]>;
  /** Users let in (of one channel, or all), oldest first. */
  paired(channel?: string): Promise<PairedUser[]>;
  /** Lets the code's user in; undefined for a code that is unknown or expired (nothing changes). */
  approve(code: string): Promise<PairedUser | undefined>;
  /** Drops the code; undefined for one that is unknown or expired. */
  deny(code: string): Promise<PendingPairing | undefined>;
  /** Lets a user out again; false when they were not paired. */
  revoke(channel: string, userId: string): Promise<boolean>;
  /** Called when a user of the channel is approved in this process (the channel tells them they are in); returns the function that stops it. */
  onApproved(channel: string, listener: (user: PairedUser) => void): () => void;
}
