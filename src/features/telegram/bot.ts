import type { TelegramChannelConfig } from "./config.js";
import type { ChannelHost } from "../../channels/channel.js";
import { ChatRelay } from "../../channels/relay.js";
import { type AllowList, senderLabel } from "./access.js";
import { type TelegramApi, telegramApi } from "./api.js";
import { incomingOf, isStart } from "./incoming.js";
import { Poller } from "./polling.js";
import { TelegramSender } from "./send.js";
import { TelegramAsks } from "./asks.js";
import type { FeatureHost } from "../../port/feature.js";

/** What the channel knows before its bot runs: its name and label, its config path, its agent and who may write. */
export interface BotSetting {
  entry: TelegramChannelConfig;
  name: string;
  label: string;
  path: string;
  agent: { id: string; name: string; description: string };
  allowed: AllowList;
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

  constructor(host: ChannelHost & Pick<FeatureHost, "approvals">, setting: BotSetting) {
    const { entry, name, label, path, agent, allowed } = setting;
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
    });
    this.asks = asks;
    const transport = {
      send: sender.send.bind(sender),
      working: sender.working.bind(sender),
      askApproval: asks.askApproval.bind(asks),
      approvalResolved: asks.approvalResolved.bind(asks),
      askQuestion: asks.askQuestion.bind(asks),
    };
    const relay = new ChatRelay(host, { channel: name, agentId: agent.id, transport, label });
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
        if (!allowed.allows(incoming.sender)) {
          host.logger.warn(`${label}: ignored a message from user ${senderLabel(incoming.sender)} in chat ${incoming.chatId}: not in ${path}.allow_from`);
          return;
        }
        if (isStart(incoming.text)) relay.reply(incoming.chatId, greeting(agent));
        else relay.receive(incoming);
      },
    });
  }

  start(): Promise<void> {
    // The private chats of the users let in by id: what their sessions get from elsewhere (a heartbeat) is sent at once.
    for (const id of this.allowedIds) this.relay.watch(id);
    return this.poller.start();
  }

  async stop(): Promise<void> {
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
