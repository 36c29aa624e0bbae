import { type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { waitFor } from "./wait.js";

/**
 * A real HTTP server on 127.0.0.1 speaking the part of the Telegram Bot API
 * a polling bot uses: `getMe`, `deleteWebhook`, `getUpdates` (a long poll
 * with an offset: updates below it are confirmed and gone), `sendMessage`
 * (HTML checked as Telegram does: known tags, properly nested, only its
 * entities; at most 4096 characters once parsed), `sendChatAction`,
 * `editMessageText` (the message's text and buttons change), callback
 * queries (`press`: a user presses an inline button) and
 * `answerCallbackQuery`. A wrong token gets 401. Tests push users' messages
 * and script failures, and read what the bot did, call by call.
 */

export const BOT_ID = 4242;

export interface TelegramUser {
  id: number;
  username?: string;
  first_name?: string;
}

export interface ApiCall {
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  payload: any;
  /** Whether the client went away before the answer (an aborted long poll). */
  aborted: boolean;
}

/** A message the bot sent, as the chat shows it. */
export interface SentMessage {
  chatId: string;
  /** The text as sent (HTML when parse_mode is HTML). */
  raw: string;
  parseMode: string | undefined;
  /** What the user reads: tags removed, entities decoded (after the last edit). */
  text: string;
  messageId: number;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  replyMarkup: any;
  /** How many times the bot edited it. */
  edits: number;
}

interface Reply {
  status: number;
  body: unknown;
}

const TAGS = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "blockquote", "tg-spoiler", "span"]);

export class FakeBotApi {
  readonly calls: ApiCall[] = [];
  readonly sent: SentMessage[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  private updates: any[] = [];
  private nextUpdate = 1;
  private nextMessage = 1;
  private readonly waiters = new Set<() => void>();
  private readonly scripted = new Map<string, Reply[]>();

  private constructor(
    private readonly server: Server,
    private readonly connections: ReadonlySet<Socket>,
    readonly url: string,
    readonly token: string,
    readonly username: string,
  ) {}

  static async start(token: string, username = "test_bot"): Promise<FakeBotApi> {
    let self: FakeBotApi | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => self!.answer(req.url ?? "", Buffer.concat(parts).toString("utf8"), res));
    });
    const connections = new Set<Socket>();
    server.on("connection", (socket: Socket) => {
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    self = new FakeBotApi(server, connections, `http://127.0.0.1:${port}`, token, username);
    return self;
  }

  /** A user writes to the bot: a private chat by default (chat id = user id). Returns the update id. */
  message(text: string, from: TelegramUser, chat: { id: number; type?: string } = { id: from.id }): number {
    const update_id = this.nextUpdate++;
    this.updates.push({
      update_id,
      message: {
        message_id: this.nextMessage++,
        date: 1_700_000_000,
        from: { is_bot: false, first_name: from.first_name ?? "User", ...from },
        chat: { type: chat.type ?? (chat.id < 0 ? "supergroup" : "private"), ...chat },
        text,
      },
    });
    for (const wake of [...this.waiters]) wake();
    return update_id;
  }

  /** A user presses an inline button of a message the bot sent (a callback query). Returns the update id. */
  press(data: string, from: TelegramUser, message: SentMessage): number {
    const update_id = this.nextUpdate++;
    this.updates.push({
      update_id,
      callback_query: {
        id: `cq${update_id}`,
        from: { is_bot: false, first_name: from.first_name ?? "User", ...from },
        chat_instance: "ci",
        data,
        message: { message_id: message.messageId, date: 1_700_000_000, chat: { id: Number(message.chatId), type: "private" }, text: message.text },
      },
    });
    for (const wake of [...this.waiters]) wake();
    return update_id;
  }

  /** The next calls of `method` get these answers instead (a 429, a 500...), in order. */
  fail(method: string, ...replies: { status: number; description: string; retry_after?: number }[]): void {
    const list = this.scripted.get(method) ?? [];
    for (const { status, description, retry_after } of replies) {
      list.push({
        status,
        body: { ok: false, error_code: status, description, ...(retry_after === undefined ? {} : { parameters: { retry_after } }) },
      });
    }
    this.scripted.set(method, list);
  }

  /** The next call of `method` gets this answer, whatever it is (an oversized body, say). */
  answerOnce(method: string, status: number, body: unknown): void {
    const list = this.scripted.get(method) ?? [];
    list.push({ status, body });
    this.scripted.set(method, list);
  }

  callsOf(method: string): ApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /**
   * Resolves once no client holds a connection open. A connection closes
   * only after everything sent on it was read, so by then every request a
   * client made is in `calls`: once a bot's client is gone (the runtime
   * closed, the process exited), nothing it sent can still be on its way.
   */
  async disconnected(): Promise<void> {
    await waitFor("every connection to the fake Bot API to close", () => this.connections.size === 0, {
      instead: () => `${this.connections.size} still open`,
    });
  }

  /** What a chat shows, message by message. */
  textsIn(chatId: number | string): string[] {
    return this.sent.filter((m) => m.chatId === String(chatId)).map((m) => m.text);
  }

  async close(): Promise<void> {
    for (const wake of [...this.waiters]) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, body: string, res: ServerResponse) {
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url);
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    let payload: any = {};
    try {
      payload = body ? JSON.parse(body) : {};
    } catch {
      return send(res, { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: invalid JSON" } });
    }
    if (!match) return send(res, { status: 404, body: { ok: false, error_code: 404, description: "Not Found" } });
    const [, token, method] = match as unknown as [string, string, string];
    const call: ApiCall = { method, payload, aborted: false };
    this.calls.push(call);
    if (token !== this.token) return send(res, { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } });
    const scripted = this.scripted.get(method)?.shift();
    if (scripted) return send(res, scripted);
    switch (method) {
      case "getMe":
        return ok(res, { id: BOT_ID, is_bot: true, first_name: "Test Bot", username: this.username, can_join_groups: true });
      case "deleteWebhook":
      case "sendChatAction":
        return ok(res, true);
      case "getUpdates":
        return this.getUpdates(payload, call, res);
      case "sendMessage":
        return this.sendMessage(payload, res);
      case "answerCallbackQuery":
        return ok(res, true);
      case "editMessageText": {
        const edited = this.sent.find((m) => m.chatId === String(payload.chat_id) && m.messageId === Number(payload.message_id));
        if (edited) {
          const parsed = payload.parse_mode === "HTML" ? parseHtml(String(payload.text)) : { text: String(payload.text) };
          if ("error" in parsed)
            return send(res, { status: 400, body: { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${parsed.error}` } });
          edited.raw = String(payload.text);
          edited.text = parsed.text;
          edited.replyMarkup = payload.reply_markup;
          edited.edits++;
        }
        return ok(res, { message_id: payload.message_id, date: 1_700_000_000, chat: { id: Number(payload.chat_id), type: "private" }, text: payload.text });
      }
      default:
        return send(res, { status: 404, body: { ok: false, error_code: 404, description: "Not Found: method not found" } });
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  private getUpdates(payload: any, call: ApiCall, res: ServerResponse) {
    const offset = Number(payload.offset ?? 0);
    if (offset > 0) this.updates = this.updates.filter((u) => u.update_id >= offset);
    const ready = () => this.updates.slice(0, Number(payload.limit ?? 100));
    if (ready().length > 0 || !payload.timeout) return ok(res, ready());
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      this.waiters.delete(done);
      clearTimeout(timer);
      if (!res.writableEnded && !res.destroyed) ok(res, ready());
    };
    timer = setTimeout(done, Number(payload.timeout) * 1000);
    this.waiters.add(done);
    res.on("close", () => {
      if (!res.writableEnded) call.aborted = true;
      this.waiters.delete(done);
      clearTimeout(timer);
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  private sendMessage(payload: any, res: ServerResponse) {
    const raw = String(payload.text ?? "");
    let text = raw;
    if (payload.parse_mode === "HTML") {
      const parsed = parseHtml(raw);
      if ("error" in parsed)
        return send(res, { status: 400, body: { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${parsed.error}` } });
      text = parsed.text;
    }
    if (text.trim() === "") return send(res, { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message text is empty" } });
    if (text.length > 4096) return send(res, { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message is too long" } });
    const chatId = String(payload.chat_id);
    const messageId = this.nextMessage++;
    this.sent.push({ chatId, raw, parseMode: payload.parse_mode, text, messageId, replyMarkup: payload.reply_markup, edits: 0 });
    ok(res, { message_id: messageId, date: 1_700_000_000, chat: { id: Number(chatId), type: "private" }, text });
  }
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  res.writeHead(reply.status, { "content-type": "application/json" });
  res.end(JSON.stringify(reply.body));
}

const ok = (res: ServerResponse, result: unknown) => send(res, { status: 200, body: { ok: true, result } });

/** Telegram's HTML: the tags it knows, nested properly, and its four entities (plus numeric ones). */
export function parseHtml(html: string): { text: string } | { error: string } {
  const open: string[] = [];
  let text = "";
  const token = /<(\/?)([a-z-]+)(?:\s[^<>]*)?>|<|&(?:(lt|gt|amp|quot)|#(\d+)|#x([0-9a-f]+));|&|[^<&]+/gi;
  for (const m of html.matchAll(token)) {
    const [all, closing, tag, named, decimal, hex] = m;
    if (tag !== undefined) {
      const name = tag.toLowerCase();
      if (!TAGS.has(name)) return { error: `unsupported start tag "${name}" at byte offset ${m.index}` };
      if (closing) {
        if (open.pop() !== name) return { error: `can't find end tag corresponding to start tag "${name}"` };
      } else open.push(name);
    } else if (all === "<") return { error: `unexpected < at byte offset ${m.index}` };
    else if (named !== undefined) text += { lt: "<", gt: ">", amp: "&", quot: '"' }[named.toLowerCase()]!;
    else if (decimal !== undefined) text += String.fromCodePoint(Number(decimal));
    else if (hex !== undefined) text += String.fromCodePoint(Number.parseInt(hex, 16));
    else if (all === "&") return { error: `unsupported entity at byte offset ${m.index}` };
    else text += all;
  }
  if (open.length > 0) return { error: `can't find end tag corresponding to start tag "${open.at(-1)}"` };
  return { text };
}
