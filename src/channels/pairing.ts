import { messageOf } from "../errors.js";
import type { Logger } from "../log.js";
import type { PairingRules, PairingUser, Pairings } from "../port/pairings.js";

/**
 * Who a chat channel lets in, the same for every chat app (README,
 * "Pairing"): a user listed in the entry's `allow_from`, and, with
 * `dm_policy: "pairing"`, a user the owner approved. Anyone else is
 * ignored (logged by id, never with what they wrote), except that with
 * `pairing` a user who writes in a private chat is answered with their
 * pairing code and how the owner approves it: no model call, no session.
 * A user writing again while their code waits is told the same code, at
 * most once per PAIRING_REMIND_MS (runtime/pairing/book.ts); past
 * `pairing_max_pending` codes waiting, new users get no reply at all.
 */

export type DmPolicy = "allowlist" | "pairing";

export interface GateOptions {
  /** The channel's name (its pairings are kept under it). */
  channel: string;
  /** How log lines name the channel. */
  label: string;
  /** Where the entry stands (`channel_list[0]`), for log lines. */
  path: string;
  policy: DmPolicy;
  rules: PairingRules;
  /** The chat app's name as users know it ("Telegram"). */
  app: string;
}

/** A sender as the gate sees them: the app's user id, a name the owner may recognise, and how log lines name them. */
export interface GateUser extends PairingUser {
  label: string;
}

/** What to do with a message: let it in, or not (with the text to answer it with, if any). */
export type Admission = { readonly admit: true } | { readonly admit: false; readonly reply?: string };

export const APPROVED_TEXT = "You are in: the owner of this bot approved your pairing code. Write to me and I will answer.";

export function pairingText(app: string, userId: string, code: string, expiresAt: number): string {
  const until = new Date(expiresAt).toISOString().slice(11, 16);
  return [
    "I do not know you yet, so I cannot answer you.",
    `Your ${app} user id: \`${userId}\``,
    `Pairing code: \`${code}\` (valid until ${until} UTC)`,
    "Ask the owner of this bot to let you in with:",
    `\`picoclaw pairing approve ${code}\``,
  ].join("\n");
}

export class ChannelGate {
  constructor(
    private readonly host: { pairings: Pairings; logger: Logger },
    private readonly opts: GateOptions,
  ) {}

  get pairing(): boolean {
    return this.opts.policy === "pairing";
  }

  /**
   * Whether a message gets in. `listed`: allow_from lists the sender;
   * `direct`: it came in a private chat (only there is a code given).
   */
  async admit(user: GateUser, where: { listed: boolean; direct: boolean; chatId: string }): Promise<Admission> {
    const { label, path, channel } = this.opts;
    if (where.listed) return { admit: true };
    if (!this.pairing) {
      this.host.logger.warn(`${label}: ignored a message from user ${user.label} in chat ${where.chatId}: not in ${path}.allow_from`);
      return { admit: false };
    }
    try {
      if (!where.direct) {
        if (await this.host.pairings.isApproved(channel, user.id)) return { admit: true };
        this.host.logger.warn(
          `${label}: ignored a message from user ${user.label} in chat ${where.chatId}: not in ${path}.allow_from nor paired (codes are given in private chats only)`,
        );
        return { admit: false };
      }
      const check = await this.host.pairings.request(channel, { id: user.id, ...(user.name ? { name: user.name } : {}) }, this.opts.rules);
      if (check.kind === "approved") return { admit: true };
      if (check.kind === "full") {
        this.host.logger.warn(
          `${label}: user ${user.label} got no pairing code: ${this.opts.rules.maxPending} codes wait already (${path}.pairing_max_pending); approve or deny one (picoclaw pairing list)`,
        );
        return { admit: false };
      }
      if (check.created) {
        this.host.logger.warn(
          `${label}: user ${user.label} asked to be let in: pairing code ${check.code} waits for the owner (picoclaw pairing approve ${check.code}) until ${new Date(check.expiresAt).toISOString()}`,
        );
      }
      return check.reply ? { admit: false, reply: pairingText(this.opts.app, user.id, check.code, check.expiresAt) } : { admit: false };
    } catch (error) {
      this.host.logger.error(`${label}: could not look up the pairing of user ${user.label}: ${messageOf(error)}; the message was ignored`);
      return { admit: false };
    }
  }

  /** Whether the sender may answer an approval request (press its buttons): listed in allow_from, or paired. */
  async trusted(userId: string, listed: boolean): Promise<boolean> {
    if (listed) return true;
    if (!this.pairing) return false;
    try {
      return await this.host.pairings.isApproved(this.opts.channel, userId);
    } catch {
      return false;
    }
  }
}
