import { GatewayDispatchEvents, GatewayIntentBits } from "@discordjs/core";
import type { ChannelHost } from "../../channels/channel.js";
import { APPROVED_TEXT, type ChannelGate } from "../../channels/pairing.js";
import { ChatRelay } from "../../channels/relay.js";
import type { FeatureHost } from "../../port/feature.js";
import { type DiscordAccess, senderLabel } from "./access.js";
import { type DiscordApi, discordApi, isTokenRefused } from "./api.js";
import { DiscordAsks } from "./asks.js";
import type { DiscordChannelConfig } from "./config.js";
import { DiscordGateway } from "./gateway.js";
import { incomingOf } from "./incoming.js";
import { messageOf } from "../../errors.js";
import { DiscordSender } from "./send.js";

/** What the channel knows before its bot runs: its name and label, its config path, its agent and who may write. */
export interface BotSetting {
  entry: DiscordChannelConfig;
  name: string;
  label: string;
  path: string;
  agent: { id: string };
  /** allow_from: decides who is listed. */
  access: DiscordAccess;
  /** Who else gets in (dm_policy): pairing codes in DMs, paired users everywhere. */
  gate: ChannelGate;
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
 * With `dm_policy: "pairing"` a user not in allow_from is let in once
 * paired (channels/pairing.ts), and is told so in a DM when the owner
 * approves them in this gateway.
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
  /** Aborts the DMs opened to tell approved users they are in, when the bot stops. */
  private readonly outside = new AbortController();
  private stopApproved: () => void = () => {};
  /** Messages are let in in the order they came, each after the pairings answered for the one before. */
  private admitting: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: ChannelHost & Pick<FeatureHost, "approvals">,
    private readonly setting: BotSetting,
  ) {
    const { entry, name, label, path, agent, access, gate } = setting;
    this.client = discordApi({
      token: entry.token,
      apiRoot: entry.api_root,
      onRateLimited: (what, waitMs, waits) =>
        host.logger.warn(
          `${label}: Discord rate-limits ${what} for ${Math.ceil(waitMs) / 1000} s; ${waits ? "waiting" : "too long to wait: the request fails"}`,
        ),
    });
    const sender = new DiscordSender(this.client, host.timer, host.logger, label);
    this.asks = new DiscordAsks({
      client: this.client,
      approvals: host.approvals,
      logger: host.logger,
      label,
      path,
      channel: name,
      agentId: agent.id,
      access,
      gate,
    });
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
    if (this.stopped) return;
    const { gate, name } = this.setting;
    // A user the owner approves (in this gateway: the CLI and the API go through it) is told they are in.
    if (gate.pairing) this.stopApproved = this.host.pairings.onApproved(name, (user) => void this.tellApproved(user.userId));
    this.gateway.start();
  }

  stop(): void {
    this.stopped = true;
    this.stopApproved();
    this.outside.abort();
    this.relay.stop();
    this.presses.abort();
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.gateway.close();
    await this.relay.close();
    this.client.dispose();
  }

  /**
   * A MESSAGE_CREATE: read, let in (or not), and handed to the relay. A
   * sender in allow_from is let in; anyone else, with dm_policy pairing,
   * is asked of the gate (a code in a DM, in only when paired), and
   * ignored otherwise. Messages are handled in the order they came: one
   * waiting for the pairings keeps the next behind it.
   */
  private message(data: unknown, mentionOnly: boolean): void {
    if (this.botId === "") return;
    const incoming = incomingOf(data, this.botId, mentionOnly);
    if (!incoming) return;
    const { label, access, gate } = this.setting;
    const logger = this.host.logger;
    const { sender, chatId } = incoming;
    const listed = access.admit(sender);
    if (!listed.admitted && !gate.pairing) {
      logger.warn(`${label}: ignored a message from user ${senderLabel(sender)} in channel ${chatId}: ${listed.why}`);
      return;
    }
    const user = { id: sender.id, ...(sender.username ? { name: `@${sender.username}` } : {}), label: senderLabel(sender) };
    const admitted = listed.admitted ? undefined : gate.admit(user, { listed: false, direct: !incoming.inGuild, chatId });
    this.admitting = this.admitting
      .then(async () => {
        const admission = admitted ? await admitted : { admit: true as const };
        if (!admission.admit) {
          if (admission.reply) this.relay.reply(chatId, admission.reply);
          return;
        }
        if (incoming.text.length > MAX_INCOMING_CHARS) {
          logger.warn(`${label}: refused a message of ${incoming.text.length} characters in channel ${chatId} (at most ${MAX_INCOMING_CHARS})`);
          this.relay.reply(chatId, TOO_LONG_TEXT);
          return;
        }
        this.relay.receive({ chatId, text: incoming.text });
      })
      .catch((error: unknown) => logger.error(`${label}: a message in channel ${chatId} was dropped: ${messageOf(error)}`));
  }

  /**
   * Tells a user the owner just approved that they are in: Discord writes
   * to a user only in a DM channel, which `POST /users/@me/channels` opens
   * (or gives back). Bounded as every REST request (REQUEST_TIMEOUT_MS,
   * retries, rate-limit waits) and aborted when the bot stops; a failure is
   * logged (the user is let in anyway).
   */
  private async tellApproved(userId: string): Promise<void> {
    const { label } = this.setting;
    const logger = this.host.logger;
    logger.info(`${label}: user ${userId} was approved; telling them`);
    try {
      const dm = await this.client.api.users.createDM(userId, { signal: this.outside.signal });
      if (!/^\d{1,20}$/.test(dm.id)) throw new Error(`Discord answered with a DM channel id that is not one: ${JSON.stringify(dm.id).slice(0, 40)}`);
      this.relay.reply(dm.id, APPROVED_TEXT);
    } catch (error) {
      if (this.outside.signal.aborted) return;
      logger.warn(`${label}: could not open a DM with user ${userId} to tell them they are in (${this.client.describe(error)}); they are let in anyway`);
    }
  }
}
