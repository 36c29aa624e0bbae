import { API } from "@discordjs/core";
import { DiscordAPIError, HTTPError, REST, RateLimitError } from "@discordjs/rest";
import { messageOf } from "../../errors.js";
import { nodeTransport } from "./transport.js";

/**
 * The REST client of one bot (@discordjs/rest), at `api_root` (default
 * https://discord.com/api), version 10: every request limited to
 * REQUEST_TIMEOUT_MS, a 5xx or a network failure tried again up to
 * REQUEST_RETRIES times, and Discord's rate limits honoured: the client
 * queues requests per route, and a 429 is waited out for the `Retry-After`
 * Discord asks for and sent again. A wait longer than MAX_RATE_LIMIT_WAIT_MS
 * is not waited: the request fails (a text is dropped and logged, the bot
 * goes on). Requests go through transport.ts. The token is only in the Authorization header; errors are
 * shown through `describe`, which removes it anyway.
 */

export const DEFAULT_API_ROOT = "https://discord.com/api";
export const REQUEST_TIMEOUT_MS = 15_000;
export const REQUEST_RETRIES = 3;
export const MAX_RATE_LIMIT_WAIT_MS = 60_000;

export interface DiscordApi {
  readonly rest: REST;
  readonly api: API;
  /** An error of a REST call in words, without the token. */
  describe(error: unknown): string;
  /** Stops the client's sweeping timers and closes its kept-alive connections. */
  dispose(): void;
}

export function discordApi(opts: {
  token: string;
  apiRoot: string | undefined;
  onRateLimited: (what: string, waitMs: number, waits: boolean) => void;
}): DiscordApi {
  const apiRoot = (opts.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, "");
  const transport = nodeTransport(apiRoot);
  const rest = new REST({
    api: apiRoot,
    makeRequest: transport.makeRequest as REST["options"]["makeRequest"],
    version: "10",
    timeout: REQUEST_TIMEOUT_MS,
    retries: REQUEST_RETRIES,
    // Asked before each wait a rate limit imposes (a 429's, or the client's own for a bucket it knows is empty).
    rejectOnRateLimit: (limit) => {
      const waitMs = Math.max(limit.retryAfter, limit.timeToReset);
      const waits = waitMs <= MAX_RATE_LIMIT_WAIT_MS;
      opts.onRateLimited(`${limit.method.toUpperCase()} ${limit.route}`, waitMs, waits);
      return !waits;
    },
  }).setToken(opts.token);
  return {
    rest,
    api: new API(rest),
    describe: (error) => describeApiError(error, opts.token),
    dispose: () => {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
      transport.dispose();
    },
  };
}

/** `403 50013: Missing Permissions`, `rate limited for 120 s`, `fetch failed`: never the token. */
export function describeApiError(error: unknown, token: string): string {
  let text: string;
  if (error instanceof DiscordAPIError) text = `${error.status} ${error.code}: ${error.message}`;
  else if (error instanceof HTTPError) text = `${error.status}: ${error.message}`;
  else if (error instanceof RateLimitError) text = `rate limited for ${Math.ceil(Math.max(error.retryAfter, error.timeToReset) / 1000)} s`;
  else text = messageOf(error);
  return token === "" ? text : text.split(token).join("<token>");
}

/** Whether Discord refused the token itself (401 Unauthorized). */
export function isTokenRefused(error: unknown): boolean {
  return (error instanceof DiscordAPIError || error instanceof HTTPError) && error.status === 401;
}
