import { z } from "zod";
import type { DiscordSender } from "./access.js";

/**
 * A gateway `MESSAGE_CREATE` as the channel reads it: the text of a user's
 * message, its channel (a DM or a server's channel or thread: the chat) and
 * its sender. Messages of bots (this one included), webhooks and Discord's
 * own notices (a member joined, a pin) are not read. In a server's channels
 * a message is read only when it mentions the bot, unless `mention_only`
 * is off; direct messages always are. The bot's mentions (`<@id>`, `<@!id>`)
 * are taken out of the text, so `@Bot /clear` is the command `/clear`.
 */

export interface Incoming {
  /** The Discord channel id: a valid chat id of a session key as it is. */
  chatId: string;
  sender: DiscordSender;
  text: string;
  /** A message in a server's channel (not a DM). */
  inGuild: boolean;
}

const SNOWFLAKE = /^\d{1,20}$/;
/** Message types a person writes: DEFAULT and REPLY. */
const USER_TYPES = new Set([0, 19]);

/** The fields read of a MESSAGE_CREATE (others are let through unread). */
const messageCreate = z.object({
  channel_id: z.string().regex(SNOWFLAKE),
  guild_id: z.string().optional(),
  content: z.string(),
  type: z.number().optional(),
  webhook_id: z.string().optional(),
  author: z.object({ id: z.string().regex(SNOWFLAKE), username: z.string().optional(), bot: z.boolean().optional() }),
  mentions: z.array(z.object({ id: z.string() })).optional(),
});

export function incomingOf(data: unknown, botId: string, mentionOnly: boolean): Incoming | null {
  const parsed = messageCreate.safeParse(data);
  if (!parsed.success) return null;
  const message = parsed.data;
  if (message.author.bot || message.author.id === botId || message.webhook_id !== undefined) return null;
  if (message.type !== undefined && !USER_TYPES.has(message.type)) return null;
  // The bot id is digits only (checked where it is learnt), so it is safe in a pattern.
  const mention = `<@!?${botId}>`;
  const inGuild = message.guild_id !== undefined;
  const mentioned = (message.mentions ?? []).some((user) => user.id === botId) || new RegExp(mention).test(message.content);
  if (inGuild && mentionOnly && !mentioned) return null;
  const text = message.content.replace(new RegExp(`${mention} ?`, "g"), "").trim();
  if (text === "") return null;
  return { chatId: message.channel_id, sender: { id: message.author.id, username: message.author.username }, text, inGuild };
}
