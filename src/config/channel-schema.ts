import { z } from "zod";
import { AGENT_ID } from "./names.js";

/** The config's `channel_list`: chat channels the gateway starts (README, "Channels"). */

/** A channel's name: the channel part of its chats' session keys (`agent:<agent>:<name>:<chat id>`). */
export const CHANNEL_NAME = /^[a-z0-9_-]{1,32}$/;
/** The channel name the HTTP API's sessions use; no chat channel may take it. */
export const HTTP_CHANNEL = "http";

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

/** A Telegram bot, by long polling (README, "Channels"). */
export const telegramChannelSchema = z.strictObject({
  name: z
    .string()
    .regex(CHANNEL_NAME, "expected 1-32 of lowercase letters, digits, _ and -")
    .optional()
    .describe('The channel part of its session keys (agent:<agent>:<name>:<chat id>); default "telegram". Must be unique.'),
  type: z.literal("telegram"),
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
    .describe("Telegram user ids (numbers) or usernames whose messages are answered; anyone else is ignored. Empty: nobody."),
  agent: z.string().regex(AGENT_ID, "expected an agent id").optional().describe("The agent that answers (default: agents.default)."),
  streaming: z.boolean().default(false).describe("Not yet: replies are sent whole (tool outputs as they happen)."),
  api_root: z
    .string()
    .refine(isApiRoot, "expected an http(s) URL without query, such as https://api.telegram.org")
    .optional()
    .describe("Root URL of the Bot API server (default https://api.telegram.org): a self-hosted one, or a fake in tests."),
});

export const channelListSchema = z
  .array(telegramChannelSchema)
  .max(100)
  .default([])
  .superRefine((list, ctx) => {
    const names = new Map<string, number>();
    list.forEach((entry, i) => {
      const name = entry.name ?? entry.type;
      if (name === HTTP_CHANNEL)
        ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${HTTP_CHANNEL}" is the HTTP API's channel; give this one a name` });
      else if (names.has(name)) {
        ctx.addIssue({
          code: "custom",
          path: [i, "name"],
          message: `"${name}" is taken by channel_list[${names.get(name)}] (a name defaults to the type); give each channel its own name`,
        });
      } else names.set(name, i);
    });
  })
  .describe('Chat channels started with the gateway (README, "Channels").');

export type TelegramChannelConfig = z.output<typeof telegramChannelSchema>;
