import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { waitFor } from "./wait.js";

/**
 * Discord for a bot, on 127.0.0.1: a real HTTP server for the REST API
 * (under /api/v10) and a real WebSocket server for the gateway (at
 * /gateway, the URL `GET /gateway/bot` answers with), on one port.
 *
 * REST: `GET /gateway/bot`, `GET /users/@me`, `POST /users/@me/channels`
 * (`{recipient_id}`: a user's DM channel, the same one each time, as
 * `dmChannelOf` gives it), `POST /channels/:id/messages`
 * (content at most 2,000 characters, as Discord checks), `PATCH
 * /channels/:id/messages/:id`, `POST /channels/:id/typing`, and `POST
 * /interactions/:id/:token/callback` (without the bot's token, as Discord
 * has it). Every other request needs `Authorization: Bot <token>` (401
 * otherwise). Tests script answers (a 429 with `Retry-After`) and read
 * every request.
 *
 * Gateway (JSON, no compression): op 10 HELLO with `heartbeat_interval`;
 * op 2 IDENTIFY (its token checked: close 4004 otherwise; its intents:
 * 4014 when the application may not have Message Content) → READY with a
 * session and `resume_gateway_url`; op 6 RESUME → RESUMED; op 1 heartbeats
 * → op 11 ACK. Tests push dispatches: a user's message (MESSAGE_CREATE), a
 * button press (INTERACTION_CREATE).
 */

export const BOT_ID = "900000000000000001";
export const GUILD_ID = "700000000000000001";

export interface DiscordUser {
  id: string;
  username: string;
  bot?: boolean;
}

export interface RestCall {
  method: string;
  /** The path below /api/v10 (`/channels/42/messages`). */
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  body: any;
  authorization: string | undefined;
  /** The status it was answered with. */
  status: number;
}

/** A message the bot sent, as the channel shows it (after its last edit). */
export interface SentMessage {
  id: string;
  channelId: string;
  content: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  components: any[] | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  allowedMentions: any;
  edits: number;
}

/** A gateway connection, as the fake saw it. */
export interface GatewayConnection {
  /** The query the bot connected with (`v=10&encoding=json`). */
  query: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON
  identify: any;
  resumed: boolean;
  heartbeats: number;
  /** The close code the bot sent, once it closed the connection. */
  closeCode: number | undefined;
  readonly socket: WebSocket;
}

interface Scripted {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface FakeDiscordOptions {
  /** The heartbeat interval HELLO asks for (default 45 s, as Discord's). */
  heartbeatMs?: number;
  botUsername?: string;
  /** Whether the application may have the Message Content intent (false: an identify asking for it is closed with 4014). */
  messageContent?: boolean;
}

export class FakeDiscord {
  readonly calls: RestCall[] = [];
  readonly sent: SentMessage[] = [];
  readonly connections: GatewayConnection[] = [];
  private readonly scripted: { method: string; path: RegExp; reply: Scripted }[] = [];
  /** Per user id, their DM channel with the bot. */
  private readonly dms = new Map<string, string>();
  private nextId = 1;
  private sequence = 0;

  private constructor(
    private readonly server: Server,
    private readonly gateway: WebSocketServer,
    private readonly sockets: ReadonlySet<Socket>,
    readonly url: string,
    readonly token: string,
    private readonly opts: FakeDiscordOptions,
  ) {}

  /** The `api_root` a bot is given: `http://127.0.0.1:<port>/api`. */
  get apiRoot(): string {
    return `${this.url}/api`;
  }

  get botUser(): DiscordUser {
    return { id: BOT_ID, username: this.opts.botUsername ?? "test_bot", bot: true };
  }

  static async start(token: string, opts: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    let self: FakeDiscord | undefined;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => self!.answer(req, Buffer.concat(parts).toString("utf8"), res));
    });
    const sockets = new Set<Socket>();
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    const gateway = new WebSocketServer({ server, path: "/gateway" });
    gateway.on("connection", (socket, req) => self!.connected(socket, req));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    self = new FakeDiscord(server, gateway, sockets, `http://127.0.0.1:${port}`, token, opts);
    return self;
  }

  /** A user writes in a channel: a DM unless `guild` is given; `mentions` lists the users the message mentions. */
  message(text: string, from: DiscordUser, where: { channelId: string; guild?: boolean; mentions?: DiscordUser[] }): void {
    this.dispatch("MESSAGE_CREATE", {
      id: this.id(),
      type: 0,
      channel_id: where.channelId,
      ...(where.guild ? { guild_id: GUILD_ID, member: { roles: [] } } : {}),
      author: { global_name: null, discriminator: "0", avatar: null, ...from },
      content: text,
      timestamp: "2024-01-01T00:00:00.000000+00:00",
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: where.mentions ?? [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
    });
  }

  /** A user presses a button of a message the bot sent. */
  press(customId: string, from: DiscordUser, message: SentMessage, guild = false): void {
    this.dispatch("INTERACTION_CREATE", {
      id: this.id(),
      application_id: BOT_ID,
      type: 3,
      token: `interaction-token-${this.nextId}`,
      version: 1,
      channel_id: message.channelId,
      ...(guild ? { guild_id: GUILD_ID, member: { user: from, roles: [] } } : { user: from }),
      message: { id: message.id, channel_id: message.channelId, content: message.content },
      data: { custom_id: customId, component_type: 2 },
    });
  }

  /** The DM channel of a user with the bot (made on first use): where their DMs come from and what `POST /users/@me/channels` opens. */
  dmChannelOf(userId: string): string {
    let channelId = this.dms.get(userId);
    if (channelId === undefined) {
      channelId = String(310000000000000000n + BigInt(this.dms.size + 1));
      this.dms.set(userId, channelId);
    }
    return channelId;
  }

  /** The next request matching `method` and `path` gets this answer instead (a 429, a 500...). */
  script(method: string, path: RegExp, reply: { status: number; headers?: Record<string, string>; body: unknown }): void {
    this.scripted.push({ method, path, reply: { headers: {}, ...reply } });
  }

  /** A 429 as Discord sends it: `Retry-After` in seconds, and the same in the body. */
  rateLimitNext(method: string, path: RegExp, retryAfterS: number): void {
    this.script(method, path, {
      status: 429,
      headers: { "retry-after": String(retryAfterS), "x-ratelimit-scope": "user" },
      body: { message: "You are being rate limited.", retry_after: retryAfterS, global: false },
    });
  }

  callsTo(method: string, path: RegExp): RestCall[] {
    return this.calls.filter((call) => call.method === method && path.test(call.path));
  }

  /** What a channel shows, message by message. */
  textsIn(channelId: string): string[] {
    return this.sent.filter((m) => m.channelId === channelId).map((m) => m.content);
  }

  /** Resolves once the bot's gateway connection is up and identified. */
  async identified(count = 1): Promise<GatewayConnection> {
    await waitFor(`${count} identified gateway connection(s)`, () => this.connections.filter((c) => c.identify).length >= count, {
      instead: () => `${this.connections.length} connection(s), ${this.connections.filter((c) => c.identify).length} identified`,
    });
    return this.connections.filter((c) => c.identify).at(-1)!;
  }

  /** Resolves once no client holds an HTTP or WebSocket connection open. */
  async disconnected(): Promise<void> {
    await waitFor("every connection to the fake Discord to close", () => this.sockets.size === 0, {
      instead: () => `${this.sockets.size} still open`,
    });
  }

  async close(): Promise<void> {
    for (const client of this.gateway.clients) client.terminate();
    await new Promise<void>((resolve) => this.gateway.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private id(): string {
    return String(800000000000000000n + BigInt(this.nextId++));
  }

  private dispatch(t: string, d: unknown): void {
    const live = this.connections.filter((c) => c.identify && c.closeCode === undefined && c.socket.readyState === c.socket.OPEN).at(-1);
    if (!live) throw new Error(`no identified gateway connection to send ${t} on`);
    live.socket.send(JSON.stringify({ op: 0, t, s: ++this.sequence, d }));
  }

  private connected(socket: WebSocket, req: IncomingMessage): void {
    const connection: GatewayConnection = {
      query: new URL(req.url ?? "/", this.url).search.slice(1),
      identify: undefined,
      resumed: false,
      heartbeats: 0,
      closeCode: undefined,
      socket,
    };
    this.connections.push(connection);
    socket.on("close", (code) => {
      connection.closeCode = code;
    });
    socket.on("message", (raw) => {
      // biome-ignore lint/suspicious/noExplicitAny: wire JSON
      let payload: any;
      try {
        payload = JSON.parse(String(raw));
      } catch {
        socket.close(4002, "Error while decoding payload.");
        return;
      }
      const send = (message: unknown) => socket.send(JSON.stringify(message));
      switch (payload.op) {
        case 1:
          connection.heartbeats++;
          send({ op: 11, d: null, s: null, t: null });
          break;
        case 2:
          if (payload.d?.token !== this.token) {
            socket.close(4004, "Authentication failed.");
            return;
          }
          if (this.opts.messageContent === false && (payload.d.intents & (1 << 15)) !== 0) {
            socket.close(4014, "Disallowed intent(s).");
            return;
          }
          connection.identify = payload.d;
          send({
            op: 0,
            t: "READY",
            s: ++this.sequence,
            d: {
              v: 10,
              user: { ...this.botUser, discriminator: "0", global_name: null, avatar: null },
              guilds: [],
              session_id: `session-${this.connections.length}`,
              resume_gateway_url: `${this.url.replace(/^http/, "ws")}/gateway`,
              shard: [0, 1],
              application: { id: BOT_ID, flags: 0 },
            },
          });
          break;
        case 6:
          connection.identify = payload.d;
          connection.resumed = true;
          send({ op: 0, t: "RESUMED", s: ++this.sequence, d: {} });
          break;
        default:
          break;
      }
    });
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.opts.heartbeatMs ?? 45_000 }, s: null, t: null }));
  }

  private answer(req: IncomingMessage, text: string, res: ServerResponse) {
    const method = req.method ?? "GET";
    const path = decodeURIComponent(new URL(req.url ?? "/", this.url).pathname).replace(/^\/api\/v10/, "");
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const call: RestCall = { method, path, body, authorization: req.headers.authorization, status: 0 };
    this.calls.push(call);
    const reply = (status: number, result?: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      if (res.destroyed) return;
      res.writeHead(status, { ...(result === undefined ? {} : { "content-type": "application/json" }), ...headers });
      res.end(result === undefined ? undefined : JSON.stringify(result));
    };
    const interaction = /^\/interactions\/\d+\/[^/]+\/callback$/.test(path);
    if (!interaction && req.headers.authorization !== `Bot ${this.token}`) return reply(401, { message: "401: Unauthorized", code: 0 });
    const scripted = this.scripted.findIndex((s) => s.method === method && s.path.test(path));
    if (scripted >= 0) {
      const r = this.scripted.splice(scripted, 1)[0]!.reply;
      return reply(r.status, r.body, r.headers);
    }
    let match: RegExpExecArray | null;
    if (method === "GET" && path === "/gateway/bot") {
      return reply(200, {
        url: `${this.url.replace(/^http/, "ws")}/gateway`,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
      });
    }
    if (method === "GET" && path === "/users/@me") return reply(200, { ...this.botUser, discriminator: "0", global_name: null, avatar: null });
    if (method === "POST" && path === "/users/@me/channels") {
      const recipient = body?.recipient_id;
      if (typeof recipient !== "string" || !/^\d{1,20}$/.test(recipient)) {
        return reply(400, { message: "Invalid Form Body", code: 50035, errors: { recipient_id: { _errors: [{ code: "NUMBER_TYPE_COERCE" }] } } });
      }
      return reply(200, {
        id: this.dmChannelOf(recipient),
        type: 1,
        last_message_id: null,
        flags: 0,
        recipients: [{ id: recipient, username: `user_${recipient.slice(-4)}`, discriminator: "0", global_name: null, avatar: null }],
      });
    }
    if (method === "POST" && (match = /^\/channels\/(\d+)\/typing$/.exec(path))) return reply(204);
    if (method === "POST" && (match = /^\/channels\/(\d+)\/messages$/.exec(path))) {
      const content = String(body?.content ?? "");
      if (content.trim() === "" && !body?.components) return reply(400, { message: "Cannot send an empty message", code: 50006 });
      if (content.length > 2000) {
        return reply(400, { message: "Invalid Form Body", code: 50035, errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } });
      }
      const message: SentMessage = {
        id: this.id(),
        channelId: match[1]!,
        content,
        components: body.components,
        allowedMentions: body.allowed_mentions,
        edits: 0,
      };
      this.sent.push(message);
      return reply(200, this.wire(message));
    }
    if (method === "PATCH" && (match = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path))) {
      const message = this.sent.find((m) => m.channelId === match![1] && m.id === match![2]);
      if (!message) return reply(404, { message: "Unknown Message", code: 10008 });
      if (body?.content !== undefined) message.content = String(body.content);
      if (body?.components !== undefined) message.components = body.components;
      message.edits++;
      return reply(200, this.wire(message));
    }
    if (method === "POST" && interaction) return reply(204);
    return reply(404, { message: "404: Not Found", code: 0 });
  }

  private wire(message: SentMessage): unknown {
    return {
      id: message.id,
      type: 0,
      channel_id: message.channelId,
      content: message.content,
      author: { ...this.botUser, discriminator: "0", global_name: null, avatar: null },
      components: message.components ?? [],
      timestamp: "2024-01-01T00:00:00.000000+00:00",
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      pinned: false,
    };
  }
}
