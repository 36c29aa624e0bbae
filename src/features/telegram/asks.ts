import type { CallbackQuery } from "grammy/types";
import type { ApprovalRequestNotice, ApprovalResolvedNotice, QuestionNotice } from "../../channels/channel.js";
import type { Logger } from "../../log.js";
import type { Approvals, Decision } from "../../port/approvals.js";
import { sessionKeyFor } from "../../session/key.js";
import type { ChannelGate } from "../../channels/pairing.js";
import { type AllowList, senderLabel } from "./access.js";
import { type TelegramApi, grammySignal } from "./api.js";
import { escapeHtml } from "./html.js";

/**
 * What waits for a person, in a Telegram chat: a tool call that needs a
 * decision is a message with inline buttons (Allow, Deny, Allow for this
 * session); pressing one decides it, for users in `allow_from` (or
 * paired: README, "Pairing") only (any other press is refused and logged). Once it is decided, anywhere (the
 * page, the API, a timeout), the message is edited to say so, without its
 * buttons. An `ask_user` question comes with its options as a reply
 * keyboard; the user's answer is their next message, as any text is.
 */

/** Inline button data: `ap:<approval id>:<a|d|s>` (Telegram allows 64 bytes). */
const CALLBACK = /^ap:([A-Za-z0-9_-]{1,48}):([ads])$/;
const DECISION_OF: Readonly<Record<string, Decision>> = { a: "allow", d: "deny", s: "allow_session" };
const SHOWN: Readonly<Record<string, string>> = { allow: "Allowed", deny: "Denied", allow_session: "Allowed for this session" };
/** Approval messages remembered for editing (the newest; an older one keeps its buttons, which then answer "decided already"). */
const REMEMBERED = 1000;
/** The most characters of a call's arguments a message shows. */
const MAX_ARGUMENTS = 1500;

export interface AsksSetting {
  client: TelegramApi;
  approvals: Approvals;
  logger: Logger;
  label: string;
  path: string;
  /** The channel part of the session keys, and the agent the chats talk to. */
  channel: string;
  agentId: string;
  allowed: AllowList;
  /** Paired users may press the buttons too. */
  gate: ChannelGate;
}

export class TelegramAsks {
  /** Per approval id, the message that shows it. */
  private readonly shown = new Map<string, { chatId: string; messageId: number; html: string }>();

  constructor(private readonly s: AsksSetting) {}

  async askApproval(chatId: string, request: ApprovalRequestNotice, signal: AbortSignal): Promise<void> {
    let args = JSON.stringify(request.arguments, null, 2) ?? "";
    if (args.length > MAX_ARGUMENTS) args = `${args.slice(0, MAX_ARGUMENTS)}\n… (${args.length - MAX_ARGUMENTS} more characters)`;
    const until = Date.parse(request.expiresAt);
    const html = `<b>${escapeHtml(request.tool)}</b> wants to run:\n<pre>${escapeHtml(args)}</pre>${Number.isFinite(until) ? `\nAnswer by ${escapeHtml(new Date(until).toISOString().slice(11, 16))} UTC, or it is denied.` : ""}`;
    const button = (text: string, code: string) => ({ text, callback_data: `ap:${request.id}:${code}` });
    try {
      const sent = await this.s.client.api.sendMessage(
        chatId,
        html,
        { parse_mode: "HTML", reply_markup: { inline_keyboard: [[button("Allow", "a"), button("Deny", "d")], [button("Allow for this session", "s")]] } },
        grammySignal(signal),
      );
      this.shown.set(request.id, { chatId, messageId: sent.message_id, html });
      if (this.shown.size > REMEMBERED) this.shown.delete(this.shown.keys().next().value!);
    } catch (error) {
      if (!signal.aborted) this.s.logger.error(`${this.s.label}: could not ask chat ${chatId} for approval ${request.id} (${this.s.client.describe(error)})`);
    }
  }

  async approvalResolved(chatId: string, resolved: ApprovalResolvedNotice, signal: AbortSignal): Promise<void> {
    const shown = this.shown.get(resolved.id);
    if (!shown || shown.chatId !== chatId) return;
    this.shown.delete(resolved.id);
    const html = `${shown.html}\n\n<b>${escapeHtml(SHOWN[resolved.decision] ?? resolved.decision)}</b> (${escapeHtml(resolved.by)})`;
    try {
      // Without reply_markup: the buttons go.
      await this.s.client.api.editMessageText(chatId, shown.messageId, html, { parse_mode: "HTML" }, grammySignal(signal));
    } catch (error) {
      if (!signal.aborted)
        this.s.logger.warn(`${this.s.label}: could not show the decision on ${resolved.id} in chat ${chatId} (${this.s.client.describe(error)})`);
    }
  }

  async askQuestion(chatId: string, question: QuestionNotice, signal: AbortSignal): Promise<void> {
    const markup =
      question.options.length > 0
        ? { reply_markup: { keyboard: question.options.map((text) => [{ text }]), one_time_keyboard: true, resize_keyboard: true } }
        : {};
    try {
      await this.s.client.api.sendMessage(chatId, escapeHtml(question.question), { parse_mode: "HTML", ...markup }, grammySignal(signal));
    } catch (error) {
      if (!signal.aborted) this.s.logger.error(`${this.s.label}: could not ask chat ${chatId} question ${question.id} (${this.s.client.describe(error)})`);
    }
  }

  /** A press of an approval button: decided for a user in allow_from (or paired), refused for anyone else. Always answered (Telegram shows a spinner until then). */
  async pressed(query: CallbackQuery, signal: AbortSignal): Promise<void> {
    const { approvals, allowed, logger, label, path } = this.s;
    const sender = { id: query.from.id, username: query.from.username };
    const match = CALLBACK.exec(query.data ?? "");
    const chatId = query.message ? String(query.message.chat.id) : undefined;
    let answer: string;
    if (!(await this.s.gate.trusted(String(sender.id), allowed.allows(sender)))) {
      logger.warn(`${label}: refused an approval button pressed by user ${senderLabel(sender)}: not in ${path}.allow_from`);
      answer = "You may not answer this.";
    } else if (!match || chatId === undefined) {
      answer = "This button is not one of mine.";
    } else {
      const sessionKey = sessionKeyFor(this.s.agentId, this.s.channel, chatId);
      const outcome = approvals.decide(sessionKey, match[1]!, DECISION_OF[match[2]!]!, `telegram:${query.from.id}`);
      answer =
        outcome.result === "decided"
          ? SHOWN[DECISION_OF[match[2]!]!]!
          : outcome.result === "settled"
            ? `Decided already: ${SHOWN[outcome.decision]?.toLowerCase()} (${outcome.by}).`
            : "That request is no longer waiting.";
    }
    try {
      await this.s.client.api.answerCallbackQuery(query.id, { text: answer }, grammySignal(signal));
    } catch {
      // Best effort: the press was taken (or refused) either way.
    }
  }
}
