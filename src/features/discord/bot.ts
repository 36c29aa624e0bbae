import { GatewayDispatchEvents, GatewayIntentBits } from "@discordjs/core";
import type { ChannelHost } from "../../channels/channel.js";
import { ChatRelay } from "../../channels/relay.js";
import type { FeatureHost } from "../../port/feature.js";
import { type DiscordAccess, senderLabel } from "./access.js";
import { type DiscordApi, discordApi, isTokenRefused } from "./api.js";
import { DiscordAsks } from "./asks.js";
import type { DiscordChannelConfig } from "./config.js";
import { DiscordGateway } from "./gateway.js";
import { incomingOf } from "./incoming.js";
import { DiscordSender } from "./send.js";

/** What the channel knows before its bot runs: its name and label, its config path, its agent and who may write. */
export interface BotSetting {
  entry: DiscordChannelConfig;
  name: string;
  label: string;
  path: string;
  agent: { id: string };
  access: DiscordAccess;
}

/** The longest message text taken (Discord's own limit, with Nitro, is 4,000); a longer one is refused with a reply. */
export const MAX_INCOMING_CHARS = 4000;
export const TOO_LONG_TEXT = `That message is too long for me (over ${MAX_INCOMING_CHARS} characters); I did not read it.`;

/**
 * A running Discord bot: the REST client, the gateway connection, and the
 * relay every channel shares. Made when the channel starts (this module,
 * and @discordjs with it, is imported only then), stopped and closed with
 * the runtime. The intents asked for: servers, their messages and direct
 * messages; the message content of every message (a privileged intent,
 * to be turned on in the Developer Portal) only with mention_only off: a
 * bot is given the content of DMs and of messages that mention it anyway.
 */
export class DiscordBot {
  private readonly client: DiscordApi;
  private readonly relay: ChatRelay;
  private readonly gateway: DiscordGateway;
  private readonly asks: DiscordAsks;
  /** The bot's own user id: its mentions, and its own messages to leave unread. */
  private botId = "";
  private stopped = false;
  /** Aborts answers to button presses still under way when the bot stops. */
  private readonly presses = new AbortController();

  constructor(
    private readonly host: ChannelHost & Pick<FeatureHost, "approvals">,
    private readonly setting: BotSetting,
  ) {
    const { entry, name, label, path, agent, access } = setting;
    this.client = discordApi({
      token: entry.token,
      apiRoot: entry.api_root,
      onRateLimited: (what, waitMs, waits) =>
        host.logger.warn(
          `${label}: Discord rate-limits ${what} for ${Math.ceil(waitMs) / 1000} s; ${waits ? "waiting" : "too long to wait: the request fails"}`,
        ),
    });
    const sender = new DiscordSender(this.client, host.timer, host.logger, label);
    this.asks = new DiscordAsks({ client: this.client, approvals: host.approvals, logger: host.logger, label, channel: name, agentId: agent.id, access });
    const asks = this.asks;
    const transport = {
      send: sender.send.bind(sender),
      working: sender.working.bind(sender),
      askApproval: asks.askApproval.bind(asks),
      approvalResolved: asks.approvalResolved.bind(asks),
      askQuestion: asks.askQuestion.bind(asks),
    };
    this.relay = new ChatRelay(host, { channel: name, agentId: agent.id, transport, label });
    const mentionOnly = entry.group_trigger.mention_only;
    const intents =
      GatewayIntentBits.Guilds | GatewayIntentBits.GuildMessages | GatewayIntentBits.DirectMessages | (mentionOnly ? 0 : GatewayIntentBits.MessageContent);
    this.gateway = new DiscordGateway({
      token: entry.token,
      client: this.client,
      intents,
      timer: host.timer,
      logger: host.logger,
      label,
      tokenPath: `${path}.token`,
      onReady: (data) => {
        if (/^\d{1,20}$/.test(data.user.id)) this.botId = data.user.id;
      },
      onDispatch: (payload) => {
        if (this.stopped) return;
        if (payload.t === GatewayDispatchEvents.MessageCreate) this.message(payload.d, mentionOnly);
        else if (payload.t === GatewayDispatchEvents.InteractionCreate) void this.asks.pressed(payload.d, this.presses.signal);
      },
    });
  }

  /**
   * Asks Discord who the bot is (a refused token throws: the channel does
   * not start; Discord out of reach is a warning), then connects to the
   * gateway in the background.
   */
  async start(): Promise<void> {
    const { label, path } = this.setting;
    const logger = this.host.logger;
    try {
      const me = await this.client.api.users.getCurrent();
      if (/^\d{1,20}$/.test(me.id)) this.botId = me.id;
    } catch (error) {
      if (isTokenRefused(error)) throw new Error(`Discord refused the token (${this.client.describe(error)}); check ${path}.token`);
      logger.warn(`${label}: cannot reach Discord yet (${this.client.describe(error)}); trying again in the background`);
    }
    if (!this.stopped) this.gateway.start();
  }

  stop(): void {
    this.stopped = true;
    this.relay.stop();
    this.presses.abort();
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.gateway.close();
    await this.relay.close();
    this.client.dispose();
  }

  /** A MESSAGE_CREATE: read, let in (or not), and handed to the relay. */
  private message(data: unknown, mentionOnly: boolean): void {
    if (this.botId === "") return;
    const incoming = incomingOf(data, this.botId, mentionOnly);
    if (!incoming) return;
    const { label } = this.setting;
    const logger = this.host.logger;
    const admission = this.setting.access.admit(incoming.sender);
    if (!admission.admitted) {
      logger.warn(`${label}: ignored a message from user ${senderLabel(incoming.sender)} in channel ${incoming.chatId}: ${admission.why}`);
      return;
    }
    if (incoming.text.length > MAX_INCOMING_CHARS) {
      logger.warn(`${label}: refused a message of ${incoming.text.length} characters in channel ${incoming.chatId} (at most ${MAX_INCOMING_CHARS})`);
      this.relay.reply(incoming.chatId, TOO_LONG_TEXT);
      return;
    }
    this.relay.receive({ chatId: incoming.chatId, text: incoming.text });
  }
}
