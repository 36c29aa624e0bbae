import { CHANNEL_CAPABILITIES, lazyBot, nobodyAllowedWarning } from "../../channels/channel.js";
import type { ChannelType } from "../../port/channel-type.js";
import { defineFeature } from "../../port/feature.js";
import { ChannelGate } from "../../channels/pairing.js";
import { pairingRulesOf } from "../../config/channel-schema.js";
import { AllowList } from "./access.js";
import { type TelegramChannelConfig, telegramChannelSchema } from "./config.js";
import { telegramFromPicoclaw } from "./picoclaw.js";

/**
 * A Telegram bot as a chat channel (README, "Channels"): grammY's client,
 * long polling, `allow_from` (and pairing: channels/pairing.ts), and the
 * relay every channel shares. Each chat
 * is a session `agent:<agent>:<name>:<chat id>` (name: `telegram` unless
 * the entry says otherwise); slash commands are ordinary text for the
 * runtime, except Telegram's `/start`, answered with a greeting. The bot
 * itself (bot.ts, with grammY) is imported when the channel starts.
 */
export const telegramChannel: ChannelType = {
  type: "telegram",
  schema: telegramChannelSchema,
  fromPicoclaw: telegramFromPicoclaw,
  create: (written, path) => {
    const entry = written as TelegramChannelConfig;
    const name = entry.name ?? entry.type;
    const label = `telegram channel "${name}"`;
    return defineFeature({
      name: label,
      needs: [...CHANNEL_CAPABILITIES, "agent", "defaultAgentId", "approvals"],
      setup(host) {
        const agent = host.agent(entry.agent ?? host.defaultAgentId);
        const allowed = new AllowList(entry.allow_from);
        const gate = new ChannelGate(host, { channel: name, label, path, policy: entry.dm_policy, rules: pairingRulesOf(entry), app: "Telegram" });
        const warnings = allowed.empty && entry.dm_policy === "allowlist" ? [nobodyAllowedWarning(path, label, "Telegram")] : [];
        return {
          warnings,
          ...lazyBot(async () => {
            const { TelegramBot } = await import("./bot.js");
            return () => new TelegramBot(host, { entry, name, label, path, agent, allowed, gate });
          }),
        };
      },
    });
  },
};
