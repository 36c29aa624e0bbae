/**
 * Whether `allow_from` lists a sender (`admit`), decided before a message
 * reaches the relay; a sender it does not list is the pairing gate's
 * (channels/pairing.ts) with `dm_policy: "pairing"`, and ignored
 * otherwise. `allow_from` lists Discord user ids (snowflakes, as
 * strings of digits) and usernames (with or without `@`, any case); a
 * sender is admitted when its id or username is listed, and an empty list
 * admits nobody. Ids are the safer choice: a username can be given up and
 * taken by someone else.
 */

export interface DiscordSender {
  id: string;
  username?: string | undefined;
}

/** What `admit` decided; a refusal says why, for the log line. */
export type Admission = { readonly admitted: true } | { readonly admitted: false; readonly why: string };

export class DiscordAccess {
  private readonly ids = new Set<string>();
  private readonly usernames = new Set<string>();

  /** `path` is where allow_from stands (`channel_list[0]`), for the refusal's words. */
  constructor(
    entries: readonly (string | number)[],
    private readonly path: string,
  ) {
    for (const entry of entries) {
      const text = String(entry).trim();
      if (/^\d+$/.test(text)) this.ids.add(text);
      else this.usernames.add(text.replace(/^@/, "").toLowerCase());
    }
  }

  get empty(): boolean {
    return this.ids.size === 0 && this.usernames.size === 0;
  }

  admit(sender: DiscordSender): Admission {
    if (this.ids.has(sender.id)) return { admitted: true };
    if (sender.username !== undefined && this.usernames.has(sender.username.toLowerCase())) return { admitted: true };
    return { admitted: false, why: `not in ${this.path}.allow_from` };
  }
}

/** How a sender is named in a log line: id and username, never what they wrote. */
export function senderLabel(sender: DiscordSender): string {
  return sender.username ? `${sender.id} (@${sender.username})` : sender.id;
}
