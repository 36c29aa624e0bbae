import { AbortedError, ModelError, PicoclawError, messageOf } from "../errors.js";
import type { SessionItem } from "../port/feature.js";
import { sessionKeyFor } from "../session/key.js";
import type { ChannelHost, ChatTransport, ReplyDraft, UserMessage } from "./channel.js";
import { wait } from "./wait.js";

/**
 * The half of a channel every chat app shares. Each chat message becomes
 * `handleMessage` on the session `agent:<agent>:<channel>:<chat id>`; what
 * the user sees comes back through the session's subscription, in order, as
 * it happens: the deliveries of the message's own turn (non-silent tool
 * output, then the answer; a command's reply), and background deliveries (a
 * spawned subagent's result) when they arrive, those kept while nobody
 * listened first. (The subscription carries exactly `outcome.delivered`, as
 * it happens, so the outcome itself is not sent again.)
 *
 * While messages of a chat are being answered, the transport shows the
 * chat that the agent works (every WORKING_EVERY_MS). Sends to one chat go
 * one at a time, in order.
 *
 * With `streaming` (and a transport that drafts), the model's text is shown
 * as it is written: the first piece of a turn's text opens a draft in the
 * chat (in order with the chat's other texts), each further piece updates
 * it, and the turn's answer finishes it with the whole reply (instead of
 * being sent again). Text written before tool calls is finished as it is
 * when the first tool starts; a turn that ends without an answer (stopped,
 * failed) leaves its draft finished with the text so far.
 *
 * Bounds (README, "Channels"): MAX_RUNNING_PER_CHAT and
 * MAX_RUNNING_PER_CHANNEL messages being answered or waiting their turn
 * (past them a message is refused with a short reply; `/stop` always
 * passes), MAX_QUEUED_SENDS_PER_CHAT texts waiting to be sent, and
 * MAX_IDLE_CHATS chats subscribed while idle (the least recently used one
 * past it is let go: its background deliveries are kept by the runtime and
 * sent before the answer to its next message).
 */

export const MAX_RUNNING_PER_CHAT = 10;
export const MAX_RUNNING_PER_CHANNEL = 100;
export const MAX_QUEUED_SENDS_PER_CHAT = 100;
export const MAX_IDLE_CHATS = 1000;
export const WORKING_EVERY_MS = 4000;
/** How long closing waits for the last texts to be sent before it aborts them. */
export const CLOSE_DEADLINE_MS = 10_000;

export const BUSY_TEXT = "I am still working on your earlier messages, so I did not take this one. Wait for the answers, or send /stop.";
export const SHUTDOWN_TEXT = "The gateway is shutting down and did not finish answering this. Send it again when it is back.";
export const FAILED_TEXT = "Sorry, something went wrong while answering; the gateway's log says more.";

export interface RelayOptions {
  /** The channel part of the session keys. */
  channel: string;
  agentId: string;
  transport: ChatTransport;
  /** How log lines name the channel (`telegram channel "telegram"`). */
  label: string;
  /** Show replies as they are written (when the transport can draft). */
  streaming?: boolean;
}

/** A turn's reply being drafted in a chat. */
interface Draft {
  readonly turnId: string;
  readonly draft: ReplyDraft;
  text: string;
  /** The turn's answer, once it was delivered (the delivery that finishes the draft). */
  answer: string | undefined;
}

interface Chat {
  readonly id: string;
  readonly sessionKey: string;
  unsubscribe: () => void;
  /** Messages handed to the runtime and not answered yet. */
  running: number;
  /** Texts waiting to be sent or being sent. */
  queued: number;
  /** The last send; the next one goes after it. */
  sending: Promise<void>;
  stopWorking: (() => void) | undefined;
  draft: Draft | undefined;
}

const STOP = /^\s*\/stop(?:\s|$)/i;

export class ChatRelay {
  private readonly chats = new Map<string, Chat>();
  /** The same chats by session key (for the runtime's events while streaming). */
  private readonly bySession = new Map<string, Chat>();
  /** Stops listening to the runtime's events. */
  private readonly unlisten: (() => void)[] = [];
  private running = 0;
  private stopping = false;
  private closed = false;
  /** Aborts sends still under way when closing runs out of time. */
  private readonly sends = new AbortController();
  /** Messages being answered (until their failure, if any, is sent on). */
  private readonly answering = new Set<Promise<void>>();

  constructor(
    private readonly host: ChannelHost,
    private readonly opts: RelayOptions,
  ) {
    if (opts.streaming && opts.transport.draft) this.listen();
  }

  /** One message from a chat user the channel accepted; answered in the background, in arrival order per chat. */
  receive(message: UserMessage): void {
    if (this.closed) return;
    const chat = this.chat(message.chatId);
    if (!STOP.test(message.text) && (chat.running >= MAX_RUNNING_PER_CHAT || this.running >= MAX_RUNNING_PER_CHANNEL)) {
      this.host.logger.warn(`${this.opts.label}: chat ${chat.id} has too many messages waiting for an answer; one was refused`);
      this.send(chat, BUSY_TEXT);
      return;
    }
    chat.running++;
    this.running++;
    this.startWorking(chat);
    const answered = this.host
      .handleMessage({ agentId: this.opts.agentId, channel: this.opts.channel, chatId: chat.id, text: message.text })
      .then(
        () => {},
        (error: unknown) => this.failed(chat, error),
      )
      .finally(() => {
        chat.running--;
        this.running--;
        if (chat.running === 0) chat.stopWorking?.();
        this.answering.delete(answered);
        this.trim();
      });
    this.answering.add(answered);
  }

  /**
   * Listens to a chat before it has written (a private chat of a user the
   * channel lets in): what its session is delivered from elsewhere (a
   * heartbeat, a scheduled job) reaches it at once.
   */
  watch(chatId: string): void {
    if (!this.closed) this.chat(chatId);
  }

  /** Sends a text to a chat outside any message (a greeting), in order with the rest. */
  reply(chatId: string, text: string): void {
    if (!this.closed) this.send(this.chat(chatId), text);
  }

  /** Takes no more messages; a message stopped from now on tells its user the gateway is shutting down. */
  stop(): void {
    this.stopping = true;
  }

  /**
   * After the runtime's turns ended: waits for the last texts to be sent (at
   * most CLOSE_DEADLINE_MS, then aborts them), and lets go of every session.
   */
  async close(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.answering]);
    for (const stop of this.unlisten.splice(0)) stop();
    for (const chat of this.chats.values()) this.finishDraft(chat);
    this.closed = true;
    for (const chat of this.chats.values()) chat.stopWorking?.();
    const deadline = new AbortController();
    const sent = Promise.allSettled([...this.chats.values()].map((chat) => chat.sending));
    const late = wait(this.host.timer, CLOSE_DEADLINE_MS, deadline.signal).then(
      () => true,
      () => false,
    );
    if (await Promise.race([sent.then(() => false), late])) {
      this.host.logger.warn(`${this.opts.label}: texts still unsent after ${CLOSE_DEADLINE_MS / 1000} s at shutdown were dropped`);
      this.sends.abort();
      await sent;
    }
    deadline.abort();
    for (const chat of this.chats.values()) chat.unsubscribe();
    this.chats.clear();
    this.bySession.clear();
  }

  /** The chat's state, subscribed to its session (what was kept for it is queued first); most recently used last. */
  private chat(chatId: string): Chat {
    let chat = this.chats.get(chatId);
    if (chat) {
      this.chats.delete(chatId);
      this.chats.set(chatId, chat);
      return chat;
    }
    const made: Chat = {
      id: chatId,
      sessionKey: sessionKeyFor(this.opts.agentId, this.opts.channel, chatId),
      unsubscribe: () => {},
      running: 0,
      queued: 0,
      sending: Promise.resolve(),
      stopWorking: undefined,
      draft: undefined,
    };
    chat = made;
    this.chats.set(chatId, made);
    this.bySession.set(made.sessionKey, made);
    made.unsubscribe = this.host.subscribe(made.sessionKey, (item) => this.delivered(made, item));
    this.trim();
    return made;
  }

  /**
   * What the session delivers goes to the chat, and so do the requests that
   * wait for the chat's person (an approval, an ask_user question) and their
   * decisions, when the transport can show them, and the word that a todo
   * call failed (`plan.failed`); other notices (a subagent started) are for
   * other views. Never throws: it runs inside the turn.
   */
  private delivered(chat: Chat, item: SessionItem): void {
    if (item.type === "delivery") {
      // The answer of the turn being drafted finishes the draft, whole.
      if (chat.draft?.answer !== undefined && item.from === "agent" && item.text === chat.draft.answer) this.finishDraft(chat, item.text);
      else if (item.text.trim() !== "") this.send(chat, item.text, item.from);
      return;
    }
    const { transport } = this.opts;
    const data = item.data as Record<string, unknown>;
    const text = (key: string) => (typeof data[key] === "string" ? (data[key] as string) : "");
    if (item.event === "approval.requested" && transport.askApproval) {
      const request = { id: text("id"), tool: text("tool"), arguments: data.arguments, expiresAt: text("expires_at") };
      this.enqueue(chat, (signal) => transport.askApproval!(chat.id, request, signal));
    } else if (item.event === "approval.resolved" && transport.approvalResolved) {
      const resolved = { id: text("id"), decision: text("decision"), by: text("by") };
      this.enqueue(chat, (signal) => transport.approvalResolved!(chat.id, resolved, signal));
    } else if (item.event === "plan.failed" && text("message") !== "") {
      // A todo call failed: the plan the person last saw may be stale (the model's result is unchanged).
      this.send(chat, text("message"), "todo");
    } else if (item.event === "question.asked" && transport.askQuestion) {
      const options = Array.isArray(data.options) ? data.options.filter((o): o is string => typeof o === "string") : [];
      const question = { id: text("id"), question: text("question"), options };
      this.enqueue(chat, (signal) => transport.askQuestion!(chat.id, question, signal));
    }
  }

  private failed(chat: Chat, error: unknown): void {
    if (error instanceof AbortedError) {
      // `/stop` answers for itself ("Stopped."); shutdown is worth a word.
      if (this.stopping) this.send(chat, SHUTDOWN_TEXT);
      return;
    }
    const code = error instanceof PicoclawError ? error.code : "internal";
    this.host.logger.warn(`${this.opts.label}: a message in chat ${chat.id} was not answered (${code}): ${messageOf(error)}`);
    // A model's failure names the model entry and what went wrong, never a key (as the HTTP API shows it).
    this.send(chat, error instanceof ModelError ? `Sorry, I could not answer: ${error.message}` : FAILED_TEXT);
  }

  private send(chat: Chat, text: string, from?: string): void {
    const transport = this.opts.transport;
    this.enqueue(chat, (signal) => transport.send(chat.id, text, signal, from));
  }

  /** Queues something to send to the chat, after what is queued already (bounded by MAX_QUEUED_SENDS_PER_CHAT). */
  private enqueue(chat: Chat, work: (signal: AbortSignal) => Promise<void>): void {
    if (this.closed) return;
    if (chat.queued >= MAX_QUEUED_SENDS_PER_CHAT) {
      this.host.logger.warn(`${this.opts.label}: chat ${chat.id} has ${chat.queued} texts waiting to be sent; one was dropped`);
      return;
    }
    chat.queued++;
    chat.sending = chat.sending
      .then(() => work(this.sends.signal))
      .catch((error: unknown) => this.host.logger.error(`${this.opts.label}: sending to chat ${chat.id} failed: ${messageOf(error)}`))
      .finally(() => {
        chat.queued--;
        this.trim();
      });
  }

  /** Listens to the model's text as it streams, and to what ends a draft (a tool starting, the answer, the turn's end). */
  private listen(): void {
    const { events } = this.host;
    const drafted = (e: { sessionKey: string; turnId?: string | undefined }) => {
      const chat = this.bySession.get(e.sessionKey);
      return chat?.draft && chat.draft.turnId === e.turnId ? chat : undefined;
    };
    this.unlisten.push(
      events.on("text.delta", (e) => {
        const chat = this.bySession.get(e.sessionKey);
        if (!chat || this.closed) return;
        if (chat.draft && chat.draft.turnId !== e.turnId) this.finishDraft(chat);
        if (!chat.draft) {
          const draft = this.opts.transport.draft!(chat.id, this.sends.signal);
          chat.draft = { turnId: e.turnId, draft, text: "", answer: undefined };
          this.enqueue(chat, () => draft.open());
        }
        chat.draft.text += e.text;
        chat.draft.draft.update(chat.draft.text);
      }),
      events.on("tool.start", (e) => {
        const chat = drafted(e);
        if (chat) this.finishDraft(chat);
      }),
      events.on("delivery", (e) => {
        const chat = drafted(e);
        if (chat && e.from === "agent") chat.draft!.answer = e.text;
      }),
      events.on("turn.end", (e) => {
        const chat = drafted(e);
        if (chat) this.finishDraft(chat);
      }),
    );
  }

  /** Ends the chat's draft, with the whole answer (or the text it has), in order with the chat's other texts. */
  private finishDraft(chat: Chat, text?: string): void {
    const drafting = chat.draft;
    if (!drafting) return;
    chat.draft = undefined;
    this.enqueue(chat, () => drafting.draft.finish(text ?? drafting.text));
  }

  /** Shows the chat that the agent works, now and every WORKING_EVERY_MS, until its messages are answered. */
  private startWorking(chat: Chat): void {
    const transport = this.opts.transport;
    if (chat.stopWorking || !transport.working) return;
    let active = true;
    let cancel = () => {};
    const beat = () => {
      if (!active) return;
      void transport.working!(chat.id, this.sends.signal);
      cancel = this.host.timer(WORKING_EVERY_MS, beat);
    };
    chat.stopWorking = () => {
      active = false;
      cancel();
      chat.stopWorking = undefined;
    };
    beat();
  }

  /** Past MAX_IDLE_CHATS, lets go of the least recently used idle chats. */
  private trim(): void {
    if (this.chats.size <= MAX_IDLE_CHATS) return;
    for (const chat of this.chats.values()) {
      if (this.chats.size <= MAX_IDLE_CHATS) break;
      if (chat.running > 0 || chat.queued > 0 || chat.draft) continue;
      chat.unsubscribe();
      this.chats.delete(chat.id);
      this.bySession.delete(chat.sessionKey);
    }
  }
}
