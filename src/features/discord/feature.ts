import { CHANNEL_CAPABILITIES, lazyBot, nobodyAllowedWarning } from "../../channels/channel.js";
import type { ChannelType } from "../../port/channel-type.js";
import { defineFeature } from "../../port/feature.js";
import { ChannelGate } from "../../channels/pairing.js";
import { pairingRulesOf } from "../../config/channel-schema.js";
import { DiscordAccess } from "./access.js";
import { type DiscordChannelConfig, discordChannelSchema } from "./config.js";
import { discordFromPicoclaw } from "./picoclaw.js";

/**
 * A Discord bot as a chat channel (README, "Channels" → "Discord"):
 * @discordjs's REST client and gateway connection, `allow_from` (and
 * pairing: channels/pairing.ts), and the relay every channel shares. Each Discord channel (a DM, a server's
 * channel or thread) is a session `agent:<agent>:<name>:<channel id>`
 * (name: `discord` unless the entry says otherwise); slash commands are
 * ordinary text for the runtime. The bot itself (bot.ts, with @discordjs)
 * is imported when the channel starts.
 */
export const discordChannel: ChannelType = {
  type: "discord",
  schema: discordChannelSchema,
  fromPicoclaw: discordFromPicoclaw,
  create: (written, path) => {
    const entry = written as DiscordChannelConfig;
    const name = entry.name ?? entry.type;
    const label = `discord channel "${name}"`;
    return defineFeature({
      name: label,
      needs: [...CHANNEL_CAPABILITIES, "agent", "defaultAgentId", "approvals"],
      setup(host) {
        const agent = host.agent(entry.agent ?? host.defaultAgentId);
        const access = new DiscordAccess(entry.allow_from, path);
        const gate = new ChannelGate(host, { channel: name, label, path, policy: entry.dm_policy, rules: pairingRulesOf(entry), app: "Discord" });
        const warnings = access.empty && entry.dm_policy === "allowlist" ? [nobodyAllowedWarning(path, label, "Discord")] : [];
        return {
          warnings,
          ...lazyBot(async () => {
            const { DiscordBot } = await import("./bot.js");
            return () => new DiscordBot(host, { entry, name, label, path, agent, access, gate });
          }),
        };
      },
    });
  },
};
