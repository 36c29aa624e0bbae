import { z } from "zod";
import { channelAgent, channelEntry, directMessageKeys } from "../../config/channel-schema.js";

/** A `channel_list` entry of type `telegram` (README, "Channels"). */

/** A token as @BotFather gives it: digits, a colon, then letters, digits, `_` and `-`. */
const TELEGRAM_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{1,200}$/;
/** A Telegram user id (digits) or username (with or without `@`). */
const TELEGRAM_USER = /^(\d{1,20}|@?[A-Za-z][A-Za-z0-9_]{0,63})$/;
const ALLOWED_USER = "expected a Telegram user id (a number) or a username (letters, digits and _, with or without @)";

/** An http(s) URL with nothing after its path (the Bot API's root: https://api.telegram.org). */
function isApiRoot(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === "http:" || url.protocol === "https:") && url.search === "" && url.hash === "";
}

/** A Telegram bot, by long polling. */
export const telegramChannelSchema = channelEntry("telegram", {
  // A `${VAR}` that is still here was not set: the loader reports that already, naming the variable.
  token: z
    .string()
    .refine(
      (token) => TELEGRAM_TOKEN.test(token) || token.includes("${"),
      "expected a bot token from @BotFather (digits, a colon, then letters, digits, _ and -)",
    )
    .describe("Secret: the bot's token from @BotFather; use ${TELEGRAM_BOT_TOKEN} to read it from the environment."),
  allow_from: z
    .array(z.union([z.int().min(1), z.string().regex(TELEGRAM_USER, ALLOWED_USER)], { error: ALLOWED_USER }))
    .max(10_000)
    .describe(
      "Telegram user ids (numbers) or usernames whose messages are answered; anyone else is ignored (or, with dm_policy pairing, given a pairing code).",
    ),
  ...directMessageKeys,
  agent: channelAgent,
  streaming: z
    .boolean()
    .default(false)
    .describe("Show a reply as the model writes it: one message, edited as the text arrives (at most once per streaming_interval_ms)."),
  streaming_interval_ms: z
    .int()
    .min(500)
    .max(60_000)
    .default(1000)
    .describe("While a reply streams, the least time between two edits of its message in one chat (Telegram limits how often a bot may edit)."),
  api_root: z
    .string()
    .refine(isApiRoot, "expected an http(s) URL without query, such as https://api.telegram.org")
    .optional()
    .describe("Root URL of the Bot API server (default https://api.telegram.org): a self-hosted one, or a fake in tests."),
});

export type TelegramChannelConfig = z.output<typeof telegramChannelSchema>;
