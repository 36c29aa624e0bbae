import { ModelError, abortReason } from "../errors.js";
import { type Timer, joinSignals, realTimer } from "../signals.js";
import { ResponseAssembler, makeCallId } from "./assembler.js";
import { type Activity, readText } from "./body.js";
import { detailOf, httpError, originOf, restate, retryAfterFromHeaders, transportError } from "./http-errors.js";
import { ANSWER_LIMITS } from "./limits.js";
import type { ModelDelta, ModelResponse } from "./provider.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, type Sleep, decideRetry, realSleep } from "./retry.js";

export type Fetch = typeof fetch;

export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_DURATION_MS = 600_000;

/** The entry's two time limits, in ms. */
export interface TransportTimeouts {
  /** How long to wait for the answer to start, and then between two pieces of data (request_timeout). */
  idleMs: number;
  /** How long the whole call may take, retries and the waits between them included (max_duration). */
  maxDurationMs: number;
}

/** What varies between production and tests: the network, waiting, randomness, call ids. */
export interface TransportOptions {
  fetch?: Fetch;
  sleep?: Sleep;
  /** In [0, 1), for backoff jitter. */
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  /** Makes an id for a tool call the server sent without one. */
  callId?: () => string;
  /** Times request_timeout and max_duration (default: real timers; tests decide when they run out). */
  timer?: Timer;
  /** Every configured secret, kept out of error messages besides the entry's own key and headers. */
  secrets?: readonly string[];
}

/** What an adapter's reader gets besides the response. */
export interface ReadContext {
  modelName: string;
  secrets: readonly (string | undefined)[];
  /**
   * Call on every piece of real data received (an event the answer is made
   * of, never a keep-alive comment or ping): it restarts the request_timeout timer.
   */
  activity: Activity;
}

/** One request in a provider's wire format, and how to read its successful answer. */
export interface WireRequest {
  url: string;
  headers: Headers;
  body: unknown;
  /** Reads a 2xx answer into `out`; throws ModelError when it is not what the format promises. */
  read(response: Response, out: ResponseAssembler, ctx: ReadContext): Promise<void>;
}

/**
 * The HTTP side shared by every adapter: one POST per attempt under the
 * turn's signal, the entry's request_timeout (an idle limit: only real data
 * restarts it) and its max_duration (a wall-clock limit on the whole call),
 * classified errors that never contain a secret, and bounded retries with
 * backoff and jitter on 429 / 5xx / dropped connections (honouring
 * `retry-after`). Once a piece of the answer has reached the caller, a
 * failure is not retried: the caller would see it twice.
 */
export class ModelTransport {
  private readonly fetchImpl: Fetch;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly policy: RetryPolicy;
  private readonly callId: () => string;
  private readonly timer: Timer;

  constructor(
    readonly modelName: string,
    readonly timeouts: TransportTimeouts,
    private readonly secrets: readonly (string | undefined)[],
    opts: TransportOptions = {},
  ) {
    this.fetchImpl = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? realSleep;
    this.random = opts.random ?? Math.random;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.callId = opts.callId ?? makeCallId;
    this.timer = opts.timer ?? realTimer;
  }

  async send(wire: WireRequest, signal: AbortSignal, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    signal.throwIfAborted();
    const deadline = new TimeLimit(this.timeouts.maxDurationMs, this.timer);
    const joined = joinSignals([signal, deadline.signal]);
    try {
      return await this.sendWithin(wire, joined.signal, onDelta);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      if (deadline.signal.aborted) {
        throw new ModelError(
          "timeout",
          this.modelName,
          `no complete answer from ${originOf(wire.url)} within ${this.timeouts.maxDurationMs} ms (max_duration); raise max_duration for long answers, or lower max_tokens`,
        );
      }
      throw error;
    } finally {
      deadline.stop();
      joined.dispose();
    }
  }

  /** The attempts of one call, all under `signal` (the turn's, joined with max_duration). */
  private async sendWithin(wire: WireRequest, signal: AbortSignal, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    for (let retries = 0; ; retries++) {
      signal.throwIfAborted();
      const out = new ResponseAssembler(this.modelName, onDelta, this.callId);
      try {
        return await this.attempt(wire, signal, out);
      } catch (error) {
        if (signal.aborted) throw abortReason(signal);
        if (!(error instanceof ModelError)) throw error;
        if (out.delivered) throw error;
        const decision = decideRetry(error, retries, this.policy, this.random);
        if (!decision.retry) {
          const notes = [retries > 0 ? `after ${retries + 1} attempts` : "", decision.why ?? ""].filter(Boolean);
          throw notes.length ? restate(error, `${detailOf(error)} (${notes.join("; ")})`) : error;
        }
        await this.sleep(decision.delayMs, signal);
      }
    }
  }

  private async attempt(wire: WireRequest, signal: AbortSignal, out: ResponseAssembler): Promise<ModelResponse> {
    const timer = new TimeLimit(this.timeouts.idleMs, this.timer);
    const ctx: ReadContext = { modelName: this.modelName, secrets: this.secrets, activity: () => timer.restart() };
    const joined = joinSignals([signal, timer.signal]);
    try {
      const response = await this.fetchImpl(wire.url, {
        method: "POST",
        headers: wire.headers,
        body: JSON.stringify(wire.body),
        signal: joined.signal,
      });
      timer.restart();
      if (!response.ok) {
        // Only the start of an error body is read: a server may send megabytes of it.
        const { text } = await readText(response.body, ctx.activity, ANSWER_LIMITS.errorBodyBytes);
        throw httpError(this.modelName, response.status, text, this.secrets, retryAfterFromHeaders(response.headers));
      }
      await wire.read(response, out, ctx);
      return out.result();
    } catch (error) {
      throw transportError(error, {
        modelName: this.modelName,
        url: wire.url,
        turnSignal: signal,
        timerSignal: timer.signal,
        timeoutMs: this.timeouts.idleMs,
        secrets: this.secrets,
      });
    } finally {
      timer.stop();
      joined.dispose();
    }
  }
}

/** An abort signal that fires `ms` after it was made, or after it was last restarted. */
class TimeLimit {
  private readonly controller = new AbortController();
  private cancel: (() => void) | undefined;

  constructor(
    private readonly ms: number,
    private readonly start: Timer,
  ) {
    this.restart();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  restart(): void {
    if (this.controller.signal.aborted) return;
    this.cancel?.();
    this.cancel = this.start(this.ms, () => this.controller.abort(new Error(`no answer within ${this.ms} ms`)));
  }

  stop(): void {
    this.cancel?.();
  }
}

/** Request headers: the adapter's own, then the entry's custom_headers (which may replace them). */
export function buildHeaders(own: Record<string, string>, custom: Record<string, string> | undefined): Headers {
  const headers = new Headers(own);
  for (const [name, value] of Object.entries(custom ?? {})) headers.set(name, value);
  return headers;
}

/** The body with the entry's extra_body merged last; a key set to null there removes the field. */
export function mergeExtraBody(body: Record<string, unknown>, extra: Record<string, unknown> | undefined): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...body };
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** Secrets to keep out of every message: the key and any custom header value that could be one. */
export function secretsOf(entry: { api_key?: string | undefined; custom_headers?: Record<string, string> | undefined }): string[] {
  const out = entry.api_key ? [entry.api_key] : [];
  for (const value of Object.values(entry.custom_headers ?? {})) if (value.length >= 8) out.push(value);
  return out;
}
