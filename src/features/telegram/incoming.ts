import type { Update } from "grammy/types";
import type { Sender } from "./access.js";

/**
 * A Telegram update as the channel reads it: the text of a new message, its
 * chat and its sender. Edits, channel posts, and messages without text
 * (photos, stickers) are not read. In groups, a command addressed to
 * another bot (`/clear@OtherBot`) is not for us; one addressed to us loses
 * its `@` suffix (`/clear@OurBot` is `/clear`), and so does a message that
 * starts by mentioning us.
 */
export interface Incoming {
  /** The chat id as Telegram gives it (negative for groups): a valid chat id of a session key as it is. */
  chatId: string;
  sender: Sender;
  text: string;
  /** A private chat with the bot (not a group). */
  direct: boolean;
}

const ADDRESSED = /^(\/[A-Za-z0-9_]+)@([A-Za-z0-9_]+)(?=\s|$)/;

export function incomingOf(update: Update, botUsername: string): Incoming | null {
  const message = update.message;
  if (!message?.from || message.from.is_bot || typeof message.text !== "string") return null;
  let text = message.text;
  const addressed = ADDRESSED.exec(text);
  if (addressed) {
    if (addressed[2]!.toLowerCase() !== botUsername.toLowerCase()) return null;
    text = addressed[1]! + text.slice(addressed[0].length);
  } else if (botUsername && text.toLowerCase().startsWith(`@${botUsername.toLowerCase()}`)) {
    const rest = text.slice(botUsername.length + 1);
    if (rest === "" || /^\s/.test(rest)) text = rest.trimStart();
  }
  if (text.trim() === "") return null;
  return {
    chatId: String(message.chat.id),
    sender: { id: message.from.id, username: message.from.username },
    text,
    direct: message.chat.type === "private",
  };
}

/** Telegram's `/start` (sent when a user opens the bot), with or without a deep-link payload. */
export function isStart(text: string): boolean {
  return /^\/start(?:\s|$)/i.test(text.trimStart());
}
