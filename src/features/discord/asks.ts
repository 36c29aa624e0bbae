import { z } from "zod";
import type { ApprovalRequestNotice, ApprovalResolvedNotice, QuestionNotice } from "../../channels/channel.js";
import type { ChannelGate } from "../../channels/pairing.js";
import type { Logger } from "../../log.js";
import type { Approvals, Decision } from "../../port/approvals.js";
import { sessionKeyFor } from "../../session/key.js";
import { type DiscordAccess, senderLabel } from "./access.js";
import type { DiscordApi } from "./api.js";

/**
 * What waits for a person, in a Discord channel: a tool call that needs a
 * decision is a message with buttons (Allow, Deny, Allow for this
 * session); pressing one decides it, for a user in allow_from or paired
 * (`ChannelGate.trusted`; any other press is refused, in a reply only the presser sees, and logged). Once it
 * is decided, anywhere (the page, the API, a timeout), the message is
 * edited to say so, without its buttons. An `ask_user` question is a
 * message with its options listed; the user's answer is their next message,
 * as any text is.
 */

/** Button ids: `ap:<approval id>:<a|d|s>` (Discord allows 100 characters). */
const CUSTOM_ID = /^ap:([A-Za-z0-9_-]{1,80}):([ads])$/;
const DECISION_OF: Readonly<Record<string, Decision>> = { a: "allow", d: "deny", s: "allow_session" };
const SHOWN: Readonly<Record<string, string>> = { allow: "Allowed", deny: "Denied", allow_session: "Allowed for this session" };
/** Approval messages remembered for editing (the newest; an older one keeps its buttons, which then answer "decided already"). */
const REMEMBERED = 1000;
/** The most characters of a call's arguments a message shows (its whole text stays under Discord's 2,000). */
const MAX_ARGUMENTS = 1500;
const MAX_QUESTION = 1800;

/** Discord's numbers: a row of buttons, a button, its styles; interaction types; an answer only the presser sees. */
const ACTION_ROW = 1;
const BUTTON = 2;
const STYLE = { primary: 1, secondary: 2, success: 3, danger: 4 } as const;
const MESSAGE_COMPONENT = 3;
const EPHEMERAL = 64;

const user = z.object({ id: z.string().regex(/^\d{1,20}$/), username: z.string().optional() });
/** The fields read of an INTERACTION_CREATE: a button press. */
const interaction = z.object({
  id: z.string(),
  token: z.string(),
  type: z.number(),
  channel_id: z
    .string()
    .regex(/^\d{1,20}$/)
    .optional(),
  data: z.object({ custom_id: z.string() }).optional(),
  member: z.object({ user }).optional(),
  user: user.optional(),
});

export interface AsksSetting {
  client: DiscordApi;
  approvals: Approvals;
  logger: Logger;
  label: string;
  /** Where the entry stands (`channel_list[0]`), for log lines. */
  path: string;
  /** The channel part of the session keys, and the agent the chats talk to. */
  channel: string;
  agentId: string;
  access: DiscordAccess;
  gate: ChannelGate;
}

export class DiscordAsks {
  /** Per approval id, the message that shows it. */
  private readonly shown = new Map<string, { chatId: string; messageId: string; content: string }>();

  constructor(private readonly s: AsksSetting) {}

  async askApproval(chatId: string, request: ApprovalRequestNotice, signal: AbortSignal): Promise<void> {
    let args = JSON.stringify(request.arguments, null, 2) ?? "";
    if (args.length > MAX_ARGUMENTS) args = `${args.slice(0, MAX_ARGUMENTS)}\n… (${args.length - MAX_ARGUMENTS} more characters)`;
    const until = Date.parse(request.expiresAt);
    const content = `**${plain(request.tool)}** wants to run:\n\`\`\`json\n${inCode(args)}\n\`\`\`${Number.isFinite(until) ? `\nAnswer by ${new Date(until).toISOString().slice(11, 16)} UTC, or it is denied.` : ""}`;
    const button = (label: string, style: number, code: string) => ({ type: BUTTON, style, label, custom_id: `ap:${request.id}:${code}` });
    try {
      const sent = await this.s.client.api.channels.createMessage(
        chatId,
        {
          content,
          allowed_mentions: { parse: [] },
          components: [
            {
              type: ACTION_ROW,
              components: [button("Allow", STYLE.success, "a"), button("Deny", STYLE.danger, "d"), button("Allow for this session", STYLE.secondary, "s")],
            },
          ],
        },
        { signal },
      );
      this.shown.set(request.id, { chatId, messageId: sent.id, content });
      if (this.shown.size > REMEMBERED) this.shown.delete(this.shown.keys().next().value!);
    } catch (error) {
      if (!signal.aborted)
        this.s.logger.error(`${this.s.label}: could not ask channel ${chatId} for approval ${request.id} (${this.s.client.describe(error)})`);
    }
  }

  async approvalResolved(chatId: string, resolved: ApprovalResolvedNotice, signal: AbortSignal): Promise<void> {
    const shown = this.shown.get(resolved.id);
    if (!shown || shown.chatId !== chatId) return;
    this.shown.delete(resolved.id);
    const content = `${shown.content}\n\n**${SHOWN[resolved.decision] ?? plain(resolved.decision)}** (${plain(resolved.by)})`;
    try {
      // Without components: the buttons go.
      await this.s.client.api.channels.editMessage(chatId, shown.messageId, { content, components: [], allowed_mentions: { parse: [] } }, { signal });
    } catch (error) {
      if (!signal.aborted)
        this.s.logger.warn(`${this.s.label}: could not show the decision on ${resolved.id} in channel ${chatId} (${this.s.client.describe(error)})`);
    }
  }

  async askQuestion(chatId: string, question: QuestionNotice, signal: AbortSignal): Promise<void> {
    const options =
      question.options.length > 0 ? `\n${question.options.map((option, i) => `${i + 1}. ${option}`).join("\n")}\n(Answer with your next message.)` : "";
    let content = `${question.question}${options}`;
    if (content.length > MAX_QUESTION) content = `${content.slice(0, MAX_QUESTION)}…`;
    try {
      await this.s.client.api.channels.createMessage(chatId, { content, allowed_mentions: { parse: [] } }, { signal });
    } catch (error) {
      if (!signal.aborted) this.s.logger.error(`${this.s.label}: could not ask channel ${chatId} question ${question.id} (${this.s.client.describe(error)})`);
    }
  }

  /**
   * An INTERACTION_CREATE: a press of an approval button decides it for a
   * user in allow_from (or paired) and is refused for anyone else. Always answered
   * (Discord shows "This interaction failed" otherwise): a decision by
   * acknowledging it (the message is edited when the decision is out), the
   * rest with a reply only the presser sees.
   */
  async pressed(data: unknown, signal: AbortSignal): Promise<void> {
    const parsed = interaction.safeParse(data);
    if (!parsed.success || parsed.data.type !== MESSAGE_COMPONENT) return;
    const press = parsed.data;
    const presser = press.member?.user ?? press.user;
    if (!presser) return;
    const { approvals, access, gate, logger, label, path } = this.s;
    const sender = { id: presser.id, username: presser.username };
    const match = CUSTOM_ID.exec(press.data?.custom_id ?? "");
    let answer: string | undefined;
    if (!(await gate.trusted(presser.id, access.admit(sender).admitted))) {
      logger.warn(`${label}: refused an approval button pressed by user ${senderLabel(sender)}: not in ${path}.allow_from${gate.pairing ? " nor paired" : ""}`);
      answer = "You may not answer this.";
    } else if (!match || press.channel_id === undefined) {
      answer = "This button is not one of mine.";
    } else {
      const sessionKey = sessionKeyFor(this.s.agentId, this.s.channel, press.channel_id);
      const outcome = approvals.decide(sessionKey, match[1]!, DECISION_OF[match[2]!]!, `discord:${presser.id}`);
      answer =
        outcome.result === "decided"
          ? undefined
          : outcome.result === "settled"
            ? `Decided already: ${SHOWN[outcome.decision]?.toLowerCase()} (${outcome.by}).`
            : "That request is no longer waiting.";
    }
    const interactions = this.s.client.api.interactions;
    try {
      if (answer === undefined) await interactions.deferMessageUpdate(press.id, press.token, {}, { signal });
      else await interactions.reply(press.id, press.token, { content: answer, flags: EPHEMERAL }, { signal });
    } catch {
      // Best effort: the press was taken (or refused) either way.
    }
  }
}

/** Text that Discord shows as it is, without Markdown (a tool name, who decided). */
function plain(text: string): string {
  return text.replace(/([\\*_~`|>#[\]()-])/g, "\\$1");
}

/** Arguments inside a code block: a ``` in them would end it. */
function inCode(text: string): string {
  return text.replaceAll("```", "`\u200b``");
}
