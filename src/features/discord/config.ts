import { z } from "zod";
import { channelAgent, channelEntry, directMessageKeys } from "../../config/channel-schema.js";

/** A `channel_list` entry of type `discord` (README, "Channels" → "Discord"). */

/** A bot token as the Developer Portal shows it: three base64url parts joined by dots. */
const DISCORD_TOKEN = /^[A-Za-z0-9_-]{10,100}\.[A-Za-z0-9_-]{4,20}\.[A-Za-z0-9_-]{20,100}$/;
/** A Discord user id (a snowflake: digits, as a string) or a username (2-32 of lowercase letters, digits, _ and ., with or without @). */
const DISCORD_USER = /^(\d{1,20}|@?[a-z0-9_.]{2,32})$/;
const ALLOWED_USER =
  "expected a Discord user id as a string of digits (ids are too large for JSON numbers) or a username (lowercase letters, digits, _ and ., with or without @)";

/** An http(s) URL with nothing after its path (Discord's API root: https://discord.com/api). */
function isApiRoot(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "";
}

/** A Discord bot, by the gateway's WebSocket. */
export const discordChannelSchema = channelEntry("discord", {
  // A `${VAR}` that is still here was not set: the loader reports that already, naming the variable.
  token: z
    .string()
    .refine(
      (token) => DISCORD_TOKEN.test(token) || token.includes("${"),
      'expected a bot token from the Discord Developer Portal (Bot → Reset Token: three parts joined by dots, without a "Bot " prefix)',
    )
    .describe("Secret: the bot's token from the Discord Developer Portal; use ${DISCORD_BOT_TOKEN} to read it from the environment."),
  allow_from: z
    .array(
      // A number is refused with the reason: a snowflake does not survive as a JSON number.
      z.union([z.string().regex(DISCORD_USER, ALLOWED_USER), z.number().refine(() => false, ALLOWED_USER)], { error: ALLOWED_USER }),
      { error: ALLOWED_USER },
    )
    .max(10_000)
    .describe(
      "Discord user ids (strings of digits) or usernames whose messages are answered; anyone else is ignored (or, with dm_policy pairing, given a pairing code in a DM). Empty: nobody.",
    ),
  ...directMessageKeys,
  agent: channelAgent,
  group_trigger: z
    .strictObject({
      mention_only: z
        .boolean()
        .default(true)
        .describe(
          "In a server's channels, answer only messages that mention the bot (default true). False: every message there (needs the Message Content intent).",
        ),
    })
    .default({ mention_only: true })
    .describe("When the bot answers in a server's channels; direct messages are always answered."),
  api_root: z
    .string()
    .refine(isApiRoot, "expected an http(s) URL without query, such as https://discord.com/api")
    .optional()
    .describe(
      "Root URL of Discord's REST API (default https://discord.com/api): a proxy, or a fake in tests. The gateway's URL is the one it answers to GET /gateway/bot.",
    ),
});

export type DiscordChannelConfig = z.output<typeof discordChannelSchema>;
