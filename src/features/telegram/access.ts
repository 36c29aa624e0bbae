/**
 * Who may talk to a bot: `allow_from` lists Telegram user ids (numbers, or
 * digits in a string) and usernames (with or without `@`, any case). A
 * message is let in when its sender's id or username is listed; an empty
 * list lets nobody in. Ids are the safer choice: a username can be given
 * up and taken by someone else.
 */

export interface Sender {
  id: number;
  username?: string | undefined;
}

export class AllowList {
  private readonly ids = new Set<string>();
  private readonly usernames = new Set<string>();

  constructor(entries: readonly (number | string)[]) {
    for (const entry of entries) {
      const text = String(entry).trim();
      if (/^\d+$/.test(text)) this.ids.add(text);
      else this.usernames.add(text.replace(/^@/, "").toLowerCase());
    }
  }

  get empty(): boolean {
    return this.ids.size === 0 && this.usernames.size === 0;
  }

  allows(sender: Sender): boolean {
    if (this.ids.has(String(sender.id))) return true;
    return sender.username !== undefined && this.usernames.has(sender.username.toLowerCase());
  }
}

/** How a sender is named in a log line: id and username, never what they wrote. */
export function senderLabel(sender: Sender): string {
  return sender.username ? `${sender.id} (@${sender.username})` : String(sender.id);
}
