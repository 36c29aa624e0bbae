import type { TelegramChannelConfig } from "./config.js";
import type { ChannelHost } from "../../channels/channel.js";
import { ChatRelay } from "../../channels/relay.js";
import { type AllowList, senderLabel } from "./access.js";
import { type TelegramApi, telegramApi } from "./api.js";
import { incomingOf, isStart } from "./incoming.js";
import { Poller } from "./polling.js";
import { TelegramSender } from "./send.js";
import { TelegramAsks } from "./asks.js";
import { TelegramDraft } from "./stream.js";
import type { FeatureHost } from "../../port/feature.js";
import { APPROVED_TEXT, type ChannelGate } from "../../channels/pairing.js";

/** What the channel knows before its bot runs: its name and label, its config path, its agent and who may write. */
export interface BotSetting {
  entry: TelegramChannelConfig;
  name: string;
  label: string;
  path: string;
  agent: { id: string; name: string; description: string };
  allowed: AllowList;
  gate: ChannelGate;
}

/**
 * A running Telegram bot: grammY's client, long polling, and the relay every
 * channel shares. Made when the channel starts (this module, and grammY
 * with it, is imported only then), stopped and closed with the runtime.
 */
export class TelegramBot {
  private readonly client: TelegramApi;
  private readonly relay: ChatRelay;
  private readonly poller: Poller;

  private readonly asks: TelegramAsks;
  /** allow_from's numeric user ids: each is a private chat's id too. */
  private readonly allowedIds: string[];
  /** Aborts answers to button presses still under way when the bot stops. */
  private readonly presses = new AbortController();
  private readonly host: ChannelHost;
  private readonly setting: BotSetting;
  private stopApproved: () => void = () => {};
  /** Messages are let in in the order they came, each after the pairings answered for the one before. */
  private admitting: Promise<void> = Promise.resolve();

  constructor(host: ChannelHost & Pick<FeatureHost, "approvals">, setting: BotSetting) {
    const { entry, name, label, path, agent, allowed, gate } = setting;
    this.host = host;
    this.setting = setting;
    this.allowedIds = entry.allow_from.map((id) => String(id).trim()).filter((id) => /^\d+$/.test(id));
    this.client = telegramApi({
      token: entry.token,
      apiRoot: entry.api_root,
      timer: host.timer,
      onRetry: (retry) => host.logger.warn(`${label}: ${retry.method} failed (${retry.why}); trying again in ${retry.waitMs / 1000} s`),
    });
    const sender = new TelegramSender(this.client, host.logger, label);
    const asks = new TelegramAsks({
      client: this.client,
      approvals: host.approvals,
      logger: host.logger,
      label,
      path,
      channel: name,
      agentId: agent.id,
      allowed,
      gate,
    });
    this.asks = asks;
    const transport = {
      send: sender.send.bind(sender),
      working: sender.working.bind(sender),
      askApproval: asks.askApproval.bind(asks),
      approvalResolved: asks.approvalResolved.bind(asks),
      askQuestion: asks.askQuestion.bind(asks),
      draft: (chatId: string, signal: AbortSignal) =>
        new TelegramDraft(
          { client: this.client, sender, timer: host.timer, logger: host.logger, label, intervalMs: entry.streaming_interval_ms },
          chatId,
          signal,
        ),
    };
    const relay = new ChatRelay(host, { channel: name, agentId: agent.id, transport, label, streaming: entry.streaming });
    this.relay = relay;
    this.poller = new Poller({
      client: this.client,
      timer: host.timer,
      logger: host.logger,
      label,
      tokenPath: `${path}.token`,
      onUpdate: (update, me) => {
        if (update.callback_query) {
          void this.asks.pressed(update.callback_query, this.presses.signal);
          return;
        }
        const incoming = incomingOf(update, me.username);
        if (!incoming) return;
        const { sender, chatId, direct } = incoming;
        const listed = allowed.allows(sender);
        const user = { id: String(sender.id), ...(sender.username ? { name: `@${sender.username}` } : {}), label: senderLabel(sender) };
        // Updates are handled in order: one waiting for the pairings keeps the next behind it (a paired user's messages stay in order).
        const admitted = listed ? undefined : gate.admit(user, { listed, direct, chatId });
        this.admitting = this.admitting.then(async () => {
          const admission = admitted ? await admitted : { admit: true as const };
          if (!admission.admit) {
            if (admission.reply) relay.reply(chatId, admission.reply);
            return;
          }
          if (isStart(incoming.text)) relay.reply(chatId, greeting(agent));
          else relay.receive(incoming);
        });
      },
    });
  }

  async start(): Promise<void> {
    // The private chats of the users let in by id: what their sessions get from elsewhere (a heartbeat) is sent at once.
    for (const id of this.allowedIds) this.relay.watch(id);
    const { gate, name, label } = this.setting;
    if (gate.pairing) {
      try {
        for (const user of await this.host.pairings.paired(name)) this.relay.watch(user.userId);
      } catch (error) {
        this.host.logger.warn(`${label}: could not read the paired users (${error instanceof Error ? error.message : String(error)})`);
      }
      // A user the owner approves (in this gateway: the CLI and the API go through it) is told they are in.
      this.stopApproved = this.host.pairings.onApproved(name, (user) => {
        this.host.logger.info(`${label}: user ${user.userId} was approved; telling them`);
        this.relay.reply(user.userId, APPROVED_TEXT);
      });
    }
    return this.poller.start();
  }

  async stop(): Promise<void> {
    this.stopApproved();
    this.relay.stop();
    this.presses.abort();
    await this.poller.stop();
  }

  async close(): Promise<void> {
    await this.poller.stop();
    await this.relay.close();
    this.client.dispose();
  }
}

function greeting(agent: { name: string; description: string }): string {
  const about = agent.description ? ` (${agent.description})` : "";
  return `Hello! I am ${agent.name}${about}. Write to me and I will answer. /help lists the commands; /new starts a fresh conversation.`;
}
