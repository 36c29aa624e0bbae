import type { TelegramChannelConfig } from "../../config/schema.js";
import type { Feature } from "../../feature/feature.js";
import { ChatRelay } from "../relay.js";
import { AllowList, senderLabel } from "./access.js";
import { telegramApi } from "./api.js";
import { incomingOf, isStart } from "./incoming.js";
import { Poller } from "./polling.js";
import { TelegramSender } from "./send.js";

/**
 * A Telegram bot as a chat channel (README, "Channels"): grammY's client,
 * long polling, `allow_from`, and the relay every channel shares. Each chat
 * is a session `agent:<agent>:<name>:<chat id>` (name: `telegram` unless
 * the entry says otherwise); slash commands are ordinary text for the
 * runtime, except Telegram's `/start`, answered with a greeting.
 */
export function telegramChannel(entry: TelegramChannelConfig, path: string): Feature {
  const name = entry.name ?? entry.type;
  const label = `telegram channel "${name}"`;
  return {
    name: label,
    setup(host) {
      const agent = host.agent(entry.agent ?? host.config.agents.default);
      const allowed = new AllowList(entry.allow_from);
      const client = telegramApi({
        token: entry.token,
        apiRoot: entry.api_root,
        timer: host.timer,
        onRetry: (retry) => host.logger.warn(`${label}: ${retry.method} failed (${retry.why}); trying again in ${retry.waitMs / 1000} s`),
      });
      const relay = new ChatRelay(host, { channel: name, agentId: agent.id, transport: new TelegramSender(client, host.logger, label), label });
      const poller = new Poller({
        client,
        timer: host.timer,
        logger: host.logger,
        label,
        tokenPath: `${path}.token`,
        onUpdate: (update, me) => {
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
      const warnings: string[] = [];
      if (allowed.empty) warnings.push(`${path}.allow_from is empty: ${label} answers nobody; list your Telegram user id there (README, "Channels")`);
      if (entry.streaming) warnings.push(`${path}.streaming: not yet: replies are sent whole (a tool's output as soon as the tool is done)`);
      return {
        warnings,
        start: () => poller.start(),
        stop: async () => {
          relay.stop();
          await poller.stop();
        },
        close: async () => {
          await poller.stop();
          await relay.close();
          client.dispose();
        },
      };
    },
  };
}

function greeting(agent: { name: string; description: string }): string {
  const about = agent.description ? ` (${agent.description})` : "";
  return `Hello! I am ${agent.name}${about}. Write to me and I will answer. /help lists the commands; /new starts a fresh conversation.`;
}
