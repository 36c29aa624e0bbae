import { ModelError, abortReason } from "../errors.js";
import { type Timer, realTimer } from "../signals.js";
import { ResponseAssembler, makeCallId } from "./assembler.js";
import { type Activity, readText } from "./body.js";
import { Cutoff, type CutCause, type Exchange, type ModelAnswer, fetchExchange, nodeExchange } from "./exchange.js";
import { detailOf, httpError, originOf, restate, retryAfterFromHeaders, transportError } from "./http-errors.js";
import { bodyBytes } from "./json-text.js";
import { ANSWER_LIMITS } from "./limits.js";
import type { ModelDelta, ModelResponse } from "./provider.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, type Sleep, decideRetry, realSleep } from "./retry.js";

export type { ModelAnswer };

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
  /** Instead of the network (undici's pool of connections): an in-memory server, a body cut at chosen bytes. */
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
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
  /** Reads a 2xx answer into `out`; throws ModelError when it is not what the format promises. */
  read(response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void>;
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
  private readonly exchange: Exchange;
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
    this.exchange = opts.fetch ? fetchExchange(opts.fetch) : nodeExchange;
    this.sleep = opts.sleep ?? realSleep;
    this.random = opts.random ?? Math.random;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.callId = opts.callId ?? makeCallId;
    this.timer = opts.timer ?? realTimer;
  }

  async send(wire: WireRequest, signal: AbortSignal, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    signal.throwIfAborted();
    const call = new CallLimits(signal, this.timeouts.maxDurationMs, this.timer);
    try {
      return await this.sendWithin(wire, call, onDelta);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      if (call.stopped === "max_duration") {
        throw new ModelError(
          "timeout",
          this.modelName,
          `no complete answer from ${originOf(wire.url)} within ${this.timeouts.maxDurationMs} ms (max_duration); raise max_duration for long answers, or lower max_tokens`,
        );
      }
      throw error;
    } finally {
      call.dispose();
    }
  }

  /** The attempts of one call, all under its limits (the turn's abort, max_duration). */
  private async sendWithin(wire: WireRequest, call: CallLimits, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    const body = bodyBytes(wire.body);
    for (let retries = 0; ; retries++) {
      call.throwIfStopped();
      const out = new ResponseAssembler(this.modelName, onDelta, this.callId);
      try {
        return await this.attempt(wire, body, call, out);
      } catch (error) {
        call.throwIfStopped();
        if (!(error instanceof ModelError)) throw error;
        if (out.delivered) throw error;
        const decision = decideRetry(error, retries, this.policy, this.random);
        if (!decision.retry) {
          const notes = [retries > 0 ? `after ${retries + 1} attempts` : "", decision.why ?? ""].filter(Boolean);
          throw notes.length ? restate(error, `${detailOf(error)} (${notes.join("; ")})`) : error;
        }
        await this.sleep(decision.delayMs, call.signal());
      }
    }
  }

  private async attempt(wire: WireRequest, body: Buffer, call: CallLimits, out: ResponseAssembler): Promise<ModelResponse> {
    const cutoff = call.attempt();
    const idleMs = this.timeouts.idleMs;
    const idle = new IdleLimit(idleMs, this.timer, () => cutoff.cut("request_timeout", new Error(`no answer within ${idleMs} ms`)));
    const ctx: ReadContext = { modelName: this.modelName, secrets: this.secrets, activity: idle.restart };
    let answer: ModelAnswer | undefined;
    try {
      answer = await this.exchange(wire.url, wire.headers, body, cutoff);
      idle.restart();
      if (answer.status < 200 || answer.status > 299) {
        // Only the start of an error body is read: a server may send megabytes of it.
        const { text } = await readText(answer.body, ctx.activity, ANSWER_LIMITS.errorBodyBytes);
        throw httpError(this.modelName, answer.status, text, this.secrets, retryAfterFromHeaders(answer.header));
      }
      await wire.read(answer, out, ctx);
      return out.result();
    } catch (error) {
      // The turn's abort and max_duration are said by send(); request_timeout and the rest here.
      if (cutoff.aborted && cutoff.cause !== "request_timeout") throw cutoff.reason;
      throw transportError(error, {
        modelName: this.modelName,
        url: wire.url,
        timedOut: cutoff.cause === "request_timeout",
        timeoutMs: idleMs,
        secrets: this.secrets,
      });
    } finally {
      idle.stop();
      call.settled(cutoff);
      // A reader that did not read the body to its end has already stopped it; this only makes sure.
      answer?.body.destroy();
    }
  }
}

/**
 * One call's own limits, the turn's abort and max_duration, passed on to the
 * attempt under way and to a wait between attempts. A listener on the
 * turn's signal and a timer: no AbortSignal is made unless the call waits to retry.
 */
class CallLimits {
  stopped: CutCause | undefined;
  private reason: Error | undefined;
  private current: Cutoff | undefined;
  private waiting: AbortController | undefined;
  private readonly cancelTimer: () => void;
  private readonly onTurn = () => this.stop("turn", abortReason(this.turn));

  constructor(
    private readonly turn: AbortSignal,
    ms: number,
    timer: Timer,
  ) {
    this.cancelTimer = timer(ms, () => this.stop("max_duration", new Error(`no complete answer within ${ms} ms`)));
    turn.addEventListener("abort", this.onTurn, { once: true });
  }

  /** The cutoff of the next attempt (already cut if the call was stopped). */
  attempt(): Cutoff {
    const cutoff = new Cutoff();
    if (this.stopped) cutoff.cut(this.stopped, this.reason!);
    this.current = cutoff;
    return cutoff;
  }

  settled(cutoff: Cutoff): void {
    if (this.current === cutoff) this.current = undefined;
  }

  throwIfStopped(): void {
    if (this.stopped) throw this.reason;
  }

  /** A signal for the wait before a retry: it aborts when the call is stopped. */
  signal(): AbortSignal {
    this.waiting ??= new AbortController();
    if (this.stopped) this.waiting.abort(this.reason);
    return this.waiting.signal;
  }

  dispose(): void {
    this.cancelTimer();
    this.turn.removeEventListener("abort", this.onTurn);
  }

  private stop(cause: CutCause, reason: Error): void {
    if (this.stopped) return;
    this.stopped = cause;
    this.reason = reason;
    this.current?.cut(cause, reason);
    this.waiting?.abort(reason);
  }
}

/** Calls `fire` once `ms` have passed since it was made, or since it was last restarted. */
class IdleLimit {
  private cancel: (() => void) | undefined;
  private fired = false;

  constructor(
    private readonly ms: number,
    private readonly start: Timer,
    private readonly fire: () => void,
  ) {
    this.restart();
  }

  readonly restart = (): void => {
    if (this.fired) return;
    this.cancel?.();
    this.cancel = this.start(this.ms, this.expire);
  };

  stop(): void {
    this.cancel?.();
  }

  private readonly expire = (): void => {
    this.fired = true;
    this.fire();
  };
}

/** Request headers: the adapter's own, then the entry's custom_headers (which may replace them). */
export function buildHeaders(own: Record<string, string>, custom: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(own)) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(custom ?? {})) headers[name.toLowerCase()] = value;
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
