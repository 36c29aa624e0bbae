import { customAlphabet } from "nanoid";
import { z } from "zod";
import { RequestError, messageOf } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { Clock } from "../../port/feature.js";
import type { PairedUser, PairingCheck, PairingRules, PairingUser, Pairings, PendingPairing } from "../../port/pairings.js";
import type { FeatureState } from "../../session/feature-state.js";

/** The namespace of the features' durable state where pairings are kept (no feature may take this name). */
export const PAIRINGS_NAMESPACE = "pairings";

/** Letters and digits without the ones read alike (0 O, 1 I): 32 of them. */
export const PAIRING_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const PAIRING_CODE_LENGTH = 8;
export const PAIRING_CODE = new RegExp(`^[${PAIRING_ALPHABET}]{${PAIRING_CODE_LENGTH}}$`);
/** A user who writes again while their code waits is told it again at most this often. */
export const PAIRING_REMIND_MS = 5 * 60_000;
/** Users one channel may have paired at most (past it, approving says so and changes nothing). */
export const MAX_PAIRED_PER_CHANNEL = 1000;
/** How much of a user's name is kept (it is for the owner to recognise them). */
const MAX_NAME = 64;
/** A user id as channels give them (Telegram's and Discord's are digits). */
const USER_ID = /^[A-Za-z0-9._~@+=-]{1,128}$/;
const CHANNEL = /^[a-z0-9_-]{1,32}$/;

export const randomPairingCode: () => string = customAlphabet(PAIRING_ALPHABET, PAIRING_CODE_LENGTH);

const pendingValue = z.object({
  channel: z.string(),
  user_id: z.string(),
  user_name: z.string().optional(),
  requested_at: z.number(),
  expires_at: z.number(),
});
const pairedValue = z.object({ channel: z.string(), user_id: z.string(), user_name: z.string().optional(), approved_at: z.number() });

const pendingKey = (code: string) => `pending:${code}`;
const userKey = (channel: string, userId: string) => `user:${channel}:${userId}`;

export interface PairingBookParts {
  /** The `pairings` namespace of the feature state. */
  state: FeatureState;
  clock: Clock;
  /** A new random code (PAIRING_ALPHABET, PAIRING_CODE_LENGTH); tests give their own. */
  codes?: () => string;
  logger: Logger;
}

/**
 * The runtime's pairings (port/pairings.ts), kept in the feature state:
 * `pending:<CODE>` for a code waiting, `user:<channel>:<user id>` for a
 * user let in. Changes go one at a time in this process, and each is
 * written with the entry's version (another gateway on a shared store
 * cannot make a second code for the same user at once without one of
 * them failing and trying again). Expired codes are dropped whenever
 * codes are looked at. When users were last told their code is kept in
 * memory only, for the codes waiting (bounded by pairing_max_pending).
 */
export class PairingBook implements Pairings {
  private readonly codes: () => string;
  /** Per code, when its user was last told it. */
  private readonly told = new Map<string, number>();
  private readonly listeners = new Map<string, Set<(user: PairedUser) => void>>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly parts: PairingBookParts) {
    this.codes = parts.codes ?? randomPairingCode;
  }

  async isApproved(channel: string, userId: string): Promise<boolean> {
    if (!CHANNEL.test(channel) || !USER_ID.test(userId)) return false;
    return pairedValue.safeParse((await this.parts.state.get(userKey(channel, userId)))?.value).success;
  }

  request(channel: string, user: PairingUser, rules: PairingRules): Promise<PairingCheck> {
    return this.serial(async () => {
      checkIds(channel, user.id);
      if (await this.isApproved(channel, user.id)) return { kind: "approved" };
      const now = this.parts.clock.now();
      const waiting = (await this.live()).filter((p) => p.channel === channel);
      const mine = waiting.find((p) => p.userId === user.id);
      if (mine) {
        const reply = now - (this.told.get(mine.code) ?? Number.NEGATIVE_INFINITY) >= PAIRING_REMIND_MS;
        if (reply) this.told.set(mine.code, now);
        return { kind: "pending", code: mine.code, expiresAt: mine.expiresAt, created: false, reply };
      }
      if (waiting.length >= rules.maxPending) return { kind: "full" };
      const name = user.name ? nameOf(user.name) : undefined;
      const value = { channel, user_id: user.id, ...(name ? { user_name: name } : {}), requested_at: now, expires_at: now + rules.ttlMs };
      // A code another request holds (or a broken source repeating itself) is not taken twice.
      for (let attempt = 0; attempt < 10; attempt++) {
        const code = this.codes();
        if (!PAIRING_CODE.test(code)) throw new Error(`a pairing code must be ${PAIRING_CODE_LENGTH} of ${PAIRING_ALPHABET}`);
        if ((await this.parts.state.put(pendingKey(code), value, 0)) === undefined) continue;
        this.told.set(code, now);
        return { kind: "pending", code, expiresAt: value.expires_at, created: true, reply: true };
      }
      throw new Error("could not find a pairing code that is not taken");
    });
  }

  pending(): Promise<PendingPairing[]> {
    return this.serial(() => this.live());
  }

  async paired(channel?: string): Promise<PairedUser[]> {
    const users = (await this.parts.state.list()).flatMap((entry) => {
      if (!entry.key.startsWith("user:")) return [];
      const parsed = pairedValue.safeParse(entry.value);
      if (!parsed.success || (channel !== undefined && parsed.data.channel !== channel)) return [];
      const v = parsed.data;
      return [{ channel: v.channel, userId: v.user_id, ...(v.user_name ? { userName: v.user_name } : {}), approvedAt: v.approved_at }];
    });
    return users.sort((a, b) => a.approvedAt - b.approvedAt);
  }

  approve(code: string): Promise<PairedUser | undefined> {
    return this.serial(async () => {
      const found = await this.waitingCode(code);
      if (!found) return undefined;
      const { pending, version } = found;
      if ((await this.paired(pending.channel)).length >= MAX_PAIRED_PER_CHANNEL) {
        throw new RequestError(
          "conflict",
          `channel ${pending.channel} has ${MAX_PAIRED_PER_CHANNEL} paired users, the most it may; revoke one first (picoclaw pairing revoke)`,
        );
      }
      const user: PairedUser = {
        channel: pending.channel,
        userId: pending.userId,
        ...(pending.userName ? { userName: pending.userName } : {}),
        approvedAt: this.parts.clock.now(),
      };
      await this.parts.state.put(userKey(user.channel, user.userId), {
        channel: user.channel,
        user_id: user.userId,
        ...(user.userName ? { user_name: user.userName } : {}),
        approved_at: user.approvedAt,
      });
      await this.parts.state.delete(pendingKey(pending.code), version);
      this.told.delete(pending.code);
      for (const listener of [...(this.listeners.get(user.channel) ?? [])]) {
        try {
          listener(user);
        } catch (error) {
          this.parts.logger.error(`pairing: telling channel ${user.channel} of user ${user.userId} failed: ${messageOf(error)}`);
        }
      }
      return user;
    });
  }

  deny(code: string): Promise<PendingPairing | undefined> {
    return this.serial(async () => {
      const found = await this.waitingCode(code);
      if (!found) return undefined;
      await this.parts.state.delete(pendingKey(found.pending.code), found.version);
      this.told.delete(found.pending.code);
      return found.pending;
    });
  }

  revoke(channel: string, userId: string): Promise<boolean> {
    return this.serial(async () => {
      if (!CHANNEL.test(channel) || !USER_ID.test(userId)) return false;
      return this.parts.state.delete(userKey(channel, userId));
    });
  }

  onApproved(channel: string, listener: (user: PairedUser) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /** The code's entry while it waits (codes are read in any case: `abcd2345` is `ABCD2345`). */
  private async waitingCode(code: string): Promise<{ pending: PendingPairing; version: number } | undefined> {
    const wanted = code.trim().toUpperCase();
    if (!PAIRING_CODE.test(wanted)) return undefined;
    const entry = await this.parts.state.get(pendingKey(wanted));
    const pending = entry && pendingOf(wanted, entry.value);
    if (!entry || !pending) return undefined;
    if (pending.expiresAt <= this.parts.clock.now()) {
      await this.drop(wanted, entry.version);
      return undefined;
    }
    return { pending, version: entry.version };
  }

  /** The codes waiting, oldest first; expired (and unreadable) ones are removed. */
  private async live(): Promise<PendingPairing[]> {
    const now = this.parts.clock.now();
    const live: PendingPairing[] = [];
    for (const entry of await this.parts.state.list()) {
      if (!entry.key.startsWith("pending:")) continue;
      const code = entry.key.slice("pending:".length);
      const pending = pendingOf(code, entry.value);
      if (pending && pending.expiresAt > now) live.push(pending);
      else await this.drop(code, entry.version);
    }
    for (const code of this.told.keys()) if (!live.some((p) => p.code === code)) this.told.delete(code);
    return live.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  private async drop(code: string, version: number): Promise<void> {
    this.told.delete(code);
    await this.parts.state.delete(pendingKey(code), version);
  }

  /** Runs one change after the others. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }
}

function pendingOf(code: string, value: unknown): PendingPairing | undefined {
  const parsed = pendingValue.safeParse(value);
  if (!parsed.success || !PAIRING_CODE.test(code)) return undefined;
  const v = parsed.data;
  return {
    code,
    channel: v.channel,
    userId: v.user_id,
    ...(v.user_name ? { userName: v.user_name } : {}),
    requestedAt: v.requested_at,
    expiresAt: v.expires_at,
  };
}

function checkIds(channel: string, userId: string): void {
  if (!CHANNEL.test(channel)) throw new TypeError(`pairing: ${JSON.stringify(channel)} is not a channel name`);
  if (!USER_ID.test(userId)) throw new TypeError(`pairing: ${JSON.stringify(userId)} is not a user id`);
}

/** A user's name as it is kept: printable, at most MAX_NAME characters. */
function nameOf(name: string): string {
  return [...name.replace(/[\p{Cc}\p{Cf}]/gu, "")].slice(0, MAX_NAME).join("");
}
