/** A session key's parts: `agent:<agent>:<channel>:<chat id>`. */
export interface SessionKey {
  key: string;
  agent: string;
  channel: string;
  chatId: string;
}

/** What `POST /v1/chat` takes as `session`: 1-128 letters, digits and . _ ~ @ + = - */
export const CHAT_ID = /^[A-Za-z0-9._~@+=-]{1,128}$/;

export function parseKey(key: string): SessionKey | undefined {
  const [head, agent, channel, ...rest] = key.split(":");
  const chatId = rest.join(":");
  if (head !== "agent" || !agent || !channel || chatId === "") return undefined;
  return { key, agent, channel, chatId };
}

/** The key of a web (HTTP) session: what `POST /v1/chat` makes of `agent` and `session`. */
export const httpKey = (agent: string, chatId: string): string => `agent:${agent}:http:${chatId}`;

/** A key as a URL path segment (its `:` stay as they are). */
export const keyPath = (key: string): string => encodeURIComponent(key).replaceAll("%3A", ":");

/** A name for a new session: `web-` and the local date and time. */
export function newChatId(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `web-${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
}
