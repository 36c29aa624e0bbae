import http from "node:http";
import https from "node:https";
import { Api, GrammyError, HttpError } from "grammy";
import { messageOf } from "../../errors.js";
import type { Timer } from "../../signals.js";
import { type Retry, retryTransformer } from "./retry.js";

/**
 * The grammY client of one bot: the Bot API at `api_root` (default
 * https://api.telegram.org), every request limited to REQUEST_TIMEOUT_S,
 * sends retried (retry.ts), connections kept alive by an agent of its own
 * that `dispose` closes. The token is in every request's URL, so errors
 * are only ever shown through `describe`, which removes it.
 */

export const DEFAULT_API_ROOT = "https://api.telegram.org";
/** Time limit of one Bot API request, the long poll included (it asks Telegram to hold at most POLL_TIMEOUT_S). */
export const REQUEST_TIMEOUT_S = 60;
/**
 * The most bytes one Bot API answer may have: a long poll of 100 updates of
 * the largest messages is well under it; a server answering more (a broken
 * or hostile `api_root`) gets the request refused (logged, and polling goes
 * on), not the gateway's memory.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface TelegramApi {
  readonly api: Api;
  /** The same client without retries: a streamed reply's edits (a later edit replaces one that failed). */
  readonly direct: Api;
  /** An error of a Bot API call in words, without the token. */
  describe(error: unknown): string;
  /** Closes the kept-alive connections. */
  dispose(): void;
}

export function telegramApi(opts: { token: string; apiRoot: string | undefined; timer: Timer; onRetry: (retry: Retry) => void }): TelegramApi {
  const apiRoot = (opts.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, "");
  const agent = apiRoot.startsWith("https:") ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  // grammY fetches with node-fetch in Node, whose `size` refuses a longer body as it arrives.
  const baseFetchConfig = { agent, size: MAX_ANSWER_BYTES } as { agent: http.Agent };
  const api = new Api(opts.token, { apiRoot, timeoutSeconds: REQUEST_TIMEOUT_S, baseFetchConfig });
  api.config.use(retryTransformer(opts.timer, opts.onRetry));
  return {
    api,
    direct: new Api(opts.token, { apiRoot, timeoutSeconds: REQUEST_TIMEOUT_S, baseFetchConfig }),
    describe: (error) => describeApiError(error, opts.token),
    dispose: () => agent.destroy(),
  };
}

/** grammY's types name the AbortSignal of its shim package; at run time it takes Node's own. */
export type GrammySignal = NonNullable<Parameters<Api["getMe"]>[0]>;
export const grammySignal = (signal: AbortSignal): GrammySignal => signal as unknown as GrammySignal;

/** `429: Too Many Requests: retry after 5`, `network error: ... ECONNREFUSED`: never the token. */
export function describeApiError(error: unknown, token: string): string {
  let text: string;
  if (error instanceof GrammyError) text = `${error.error_code}: ${error.description}`;
  else if (error instanceof HttpError) text = `network error: ${messageOf(error.error)}`;
  else text = messageOf(error);
  return token === "" ? text : text.split(token).join("<token>");
}

/** Whether Telegram refused the token itself (401 Unauthorized, or 404 for one that is malformed). */
export function isTokenRefused(error: unknown): boolean {
  return error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404);
}
