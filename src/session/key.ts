import { AGENT_ID } from "../config/schema.js";

/**
 * Session keys, and the only code that splits them. A root key is
 * `agent:<agent>:<channel>:<chat>`; a subagent's key appends
 * `:subagent:<id>` to its parent's, once per level of nesting.
 */

export interface SessionKeyParts {
  agentId: string;
  channel: string;
  chatId: string;
  /** Child ids from the root down; empty for a root session. */
  subagents: string[];
}

/** What a chat id (the `session` of a request) may contain: no `:` so keys stay parseable. */
export const CHAT_ID = /^[A-Za-z0-9._~@+=-]{1,128}$/;
const CHANNEL = /^[a-z0-9_-]{1,32}$/;
const CHILD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SUBAGENT = "subagent";
/**
 * The chat id of a session that lives for one message (a conversation the
 * client keeps and sends whole): `!` marks it, and no client's chat id may
 * hold one, so no client can name such a session nor make one.
 */
const ONE_MESSAGE = /^![A-Za-z0-9_-]{1,64}$/;

export function sessionKeyFor(agentId: string, channel: string, chatId: string): string {
  return `agent:${agentId}:${channel}:${chatId}`;
}

/** The key of a session that lives for one message, `id` unique among them. */
export function oneMessageKey(agentId: string, channel: string, id: string): string {
  return sessionKeyFor(agentId, channel, `!${id}`);
}

export function childSessionKey(parent: string, childId: string): string {
  return `${parent}:${SUBAGENT}:${childId}`;
}

export function parseSessionKey(key: string): SessionKeyParts | null {
  const parts = key.split(":");
  if (parts.length < 4 || parts.length % 2 !== 0 || parts[0] !== "agent") return null;
  const [, agentId, channel, chatId] = parts as [string, string, string, string];
  if (!AGENT_ID.test(agentId) || !CHANNEL.test(channel) || !(CHAT_ID.test(chatId) || ONE_MESSAGE.test(chatId))) return null;
  const subagents: string[] = [];
  for (let i = 4; i < parts.length; i += 2) {
    if (parts[i] !== SUBAGENT || !CHILD_ID.test(parts[i + 1]!)) return null;
    subagents.push(parts[i + 1]!);
  }
  return { agentId, channel, chatId, subagents };
}

export function isSubagentKey(key: string): boolean {
  return (parseSessionKey(key)?.subagents.length ?? 0) > 0;
}

/**
 * A session whose history is never written to disk nor listed among the
 * conversations: a subagent's (released when its sub-turn ends) or one that
 * lives for one message.
 */
export function isTransientKey(key: string): boolean {
  const parsed = parseSessionKey(key);
  return parsed !== null && (parsed.subagents.length > 0 || parsed.chatId.startsWith("!"));
}

/** How many subagent levels deep a key is (0 for a root session). */
export function depth(key: string): number {
  return parseSessionKey(key)?.subagents.length ?? 0;
}

/** The key of the session that started this one, or null for a root session. */
export function parentKey(key: string): string | null {
  const parsed = parseSessionKey(key);
  if (!parsed || parsed.subagents.length === 0) return null;
  const root = sessionKeyFor(parsed.agentId, parsed.channel, parsed.chatId);
  return parsed.subagents.slice(0, -1).reduce(childSessionKey, root);
}

/** The agent a key belongs to (the one in its root). */
export function agentOfKey(key: string): string | null {
  return parseSessionKey(key)?.agentId ?? null;
}

/** The root session a key belongs to (itself for a root session). */
export function rootKey(key: string): string {
  const parsed = parseSessionKey(key);
  return parsed ? sessionKeyFor(parsed.agentId, parsed.channel, parsed.chatId) : key;
}

/** Whether `key` is `ancestor` itself or a subagent somewhere below it. */
export function isWithin(key: string, ancestor: string): boolean {
  return key === ancestor || key.startsWith(`${ancestor}:subagent:`);
}
