import { z } from "zod";
import { AGENT_ID } from "./names.js";

/** The config's `channel_list`: chat channels the gateway starts (README, "Channels"). */

/** A channel's name: the channel part of its chats' session keys (`agent:<agent>:<name>:<chat id>`). */
export const CHANNEL_NAME = /^[a-z0-9_-]{1,32}$/;
/** The channel name the HTTP API's sessions use; no chat channel may take it. */
export const HTTP_CHANNEL = "http";

/**
 * A channel entry's schema: what every channel has (`name`, `type`, the
 * `agent` that answers) and the chat app's own keys. A channel type
 * registers its entry made with this; `channel_list` takes any of them.
 */
export function channelEntry<const T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.strictObject({
    name: z
      .string()
      .regex(CHANNEL_NAME, "expected 1-32 of lowercase letters, digits, _ and -")
      .optional()
      .describe(`The channel part of its session keys (agent:<agent>:<name>:<chat id>); default "${type}". Must be unique.`),
    type: z.literal(type),
    ...shape,
    // Where the shape puts `channelAgent` (its keys' order is the order of their errors), else last.
    agent: (shape.agent as typeof channelAgent | undefined) ?? channelAgent,
  });
}

/** The `agent` key every channel entry has; a channel type may place it among its own keys. */
export const channelAgent = z.string().regex(AGENT_ID, "expected an agent id").optional().describe("The agent that answers (default: agents.default).");

/**
 * Who a chat channel answers besides `allow_from` (README, "Pairing"): a
 * channel type spreads these keys into its entry. `allowlist`: nobody else
 * (their messages are ignored). `pairing`: a user who writes in a private
 * chat gets a pairing code and nothing else, until the owner approves it.
 */
export const DM_POLICIES = ["allowlist", "pairing"] as const;
export const directMessageKeys = {
  dm_policy: z
    .enum(DM_POLICIES)
    .default("allowlist")
    .describe('Who is answered besides allow_from: "allowlist" (nobody) or "pairing" (an unknown user in a private chat gets a code the owner approves).'),
  pairing_code_ttl_minutes: z.int().min(1).max(1440).default(60).describe("How long a pairing code can be approved (minutes)."),
  pairing_max_pending: z
    .int()
    .min(1)
    .max(100)
    .default(3)
    .describe("Pairing codes waiting at most in this channel; past it, unknown users get no code (and no reply) until one is approved, denied or expires."),
};

/** An entry's pairing keys as the runtime's pairings take them. */
export const pairingRulesOf = (entry: { pairing_code_ttl_minutes: number; pairing_max_pending: number }) => ({
  ttlMs: entry.pairing_code_ttl_minutes * 60_000,
  maxPending: entry.pairing_max_pending,
});

/** What every channel entry has, whatever its type. */
export interface ChannelEntry {
  name?: string | undefined;
  type: string;
  agent?: string | undefined;
}

/** `channel_list`: entries of the registered channel types, told apart by `type`. */
export const channelListSchema = (types: readonly z.ZodObject[]) =>
  z
    .array(types.length === 0 ? z.never() : z.discriminatedUnion("type", types as unknown as [z.ZodObject, ...z.ZodObject[]]))
    .max(100)
    .default([])
    .superRefine((list, ctx) => {
      const names = new Map<string, number>();
      (list as unknown as ChannelEntry[]).forEach((entry, i) => {
        const name = entry.name ?? entry.type;
        if (name === HTTP_CHANNEL)
          ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${HTTP_CHANNEL}" is the HTTP API's channel; give this one a name` });
        else if (names.has(name)) {
          ctx.addIssue({
            code: "custom",
            path: [i, "name"],
            message: `"${name}" is taken by channel_list[${names.get(name)}] (a name defaults to the type); give each channel its own name`,
          });
        } else names.set(name, i);
      });
    })
    .describe('Chat channels started with the gateway (README, "Channels").');
