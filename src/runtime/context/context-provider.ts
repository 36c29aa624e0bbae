import type { Config } from "../../config/schema.js";
import { ModelError } from "../../errors.js";
import { type ChatMessage, isRecord } from "../../models/message.js";
import { type ModelDelta, type ModelProvider, type ModelRequest, type ModelResponse, promptTokensOf } from "../../models/provider.js";
import type { HistoryStore } from "../../session/history.js";
import {
  DEFAULT_ANSWER_TOKENS,
  DEFAULT_CONTEXT_WINDOW,
  type Fitted,
  type MessageSums,
  type RequestParts,
  TokenGauge,
  boundTokens,
  estimateTokens,
  fitRequest,
  requestChars,
  splitRequest,
  sumMessages,
  summedRequestChars,
  toolTokens,
} from "./context-window.js";
import { summaryExchange } from "./summary.js";

/**
 * Every model call of a turn fitted to the model's context window
 * (`context_window`, leaving `max_tokens` for the answer): the agent's
 * prompt, the tools and this turn always go; then as many whole recent
 * exchanges as fit. If the provider still says the request is too long, the
 * call is fitted again with what it said (and at most half the exchanges)
 * and tried once more. With `agents.defaults.summarize`, the first
 * exchanges a turn leaves out are summarised by the same model, and the
 * summary takes their place in the session's history.
 */
export class ContextFitter {
  private readonly gauge = new TokenGauge();

  constructor(
    private readonly config: Config,
    private readonly history: HistoryStore,
  ) {}

  /** The provider one turn of `sessionKey` uses: `provider`, fitting each request. */
  forTurn(provider: ModelProvider, modelName: string, sessionKey: string): ModelProvider {
    const entry = this.config.model_list.find((m) => m.model_name === modelName);
    const window = entry?.context_window ?? DEFAULT_CONTEXT_WINDOW;
    const answer = entry?.max_tokens ?? this.config.agents.defaults.max_tokens ?? Math.min(DEFAULT_ANSWER_TOKENS, Math.floor(window / 4));
    const summarize = this.config.agents.defaults.summarize ? { history: this.history, sessionKey } : undefined;
    return new FittedProvider(provider, this.gauge, window, answer, summarize);
  }
}

/** What a call sends: fitted, or the request whole (whose exchanges, all kept, are not split out unless needed). */
type Sent = Omit<Fitted, "kept"> & { kept?: ChatMessage[][] };

class FittedProvider implements ModelProvider {
  readonly name: string;
  /** The summary this turn made: it stands for the first `replaces` exchanges of the history. */
  private summary: { replaces: number; exchange: ChatMessage[] } | undefined;
  private summaryTried = false;
  /** A request of this turn did not fit whole: its later ones, only longer, are fitted at once (no pass over them for nothing). */
  private overWhole = false;
  /** The last request's messages and their sums: the next request of the turn starts with the same messages, whose sums are kept. */
  private measured: { messages: readonly ChatMessage[]; sums: MessageSums } | undefined;

  constructor(
    private readonly inner: ModelProvider,
    private readonly gauge: TokenGauge,
    private readonly window: number,
    private readonly answer: number,
    private readonly summarize: { history: HistoryStore; sessionKey: string } | undefined,
  ) {
    this.name = inner.name;
  }

  async chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    // Most requests fit whole: then nothing is split or fitted (one pass over the messages), and the
    // parts are made only if the provider says the request was too long after all.
    let parts: RequestParts | undefined;
    let fitted: Sent | undefined = this.whole(request);
    if (!fitted) {
      parts = this.withSummary(splitRequest(request.messages));
      let full = this.fit(parts, request);
      if (this.summarize && !this.summaryTried && full.dropped.length > 0) {
        this.summaryTried = true;
        parts = await this.summarise(parts, full, request.signal);
        full = this.fit(parts, request);
      }
      fitted = full;
    }
    try {
      return await this.send(request, fitted, onDelta);
    } catch (error) {
      const overflow = error instanceof ModelError ? error.contextOverflow : undefined;
      if (!overflow || request.signal.aborted) throw error;
      // Learn from it: the true size (the estimate was off), the true window, and not to try this size again.
      const chars = requestChars(fitted.messages, request.tools);
      if (overflow.promptTokens) this.gauge.counted(this.name, chars, fitted.messages.length, overflow.promptTokens);
      const ratio = this.gauge.charsPerToken(this.name);
      const sent = estimateTokens(fitted.messages, ratio) + toolTokens(request.tools, ratio);
      const limit = overflow.limitTokens;
      this.gauge.overflowed(this.name, sent, limit === undefined ? undefined : limit - Math.min(this.answer, Math.floor(limit / 4)));
      parts ??= splitRequest(request.messages);
      const kept = fitted.kept ?? parts.exchanges;
      const retry = this.fit(parts, request, Math.floor(kept.length / 2));
      if (retry.kept.length >= kept.length) throw error;
      return this.send(request, retry, onDelta);
    }
  }

  /**
   * The request as it is when all of it fits the budget (what fitRequest would keep, found without splitting it:
   * every message is in exactly one part, and the estimate adds up message by message); no summary stands in.
   */
  private whole(request: ModelRequest): Sent | undefined {
    if (this.summary || this.overWhole) return undefined;
    const ratio = this.gauge.charsPerToken(this.name);
    const budget = this.budget();
    const tools = toolTokens(request.tools, ratio);
    // A bound from sums kept across the turn's calls (each sends the last one's messages and a few more) settles most
    // requests; only one near the budget is estimated message by message.
    const bound = tools + boundTokens(this.sumsOf(request.messages), ratio);
    if (bound <= budget) return { messages: request.messages, dropped: [], tokens: bound };
    const tokens = tools + estimateTokens(request.messages, ratio);
    if (tokens <= budget) return { messages: request.messages, dropped: [], tokens };
    this.overWhole = true;
    return undefined;
  }

  /** The sums of `messages`: those of the last request's messages kept when they are the first of these (the same objects). */
  private sumsOf(messages: readonly ChatMessage[]): MessageSums {
    const last = this.measured;
    let same = last !== undefined && messages.length >= last.messages.length;
    for (let i = 0; same && i < last!.messages.length; i++) same = messages[i] === last!.messages[i];
    const sums = same ? sumMessages(messages, last!.messages.length, last!.sums) : sumMessages(messages);
    this.measured = { messages, sums };
    return sums;
  }

  /** Characters of what a call sent: from the sums the whole-request check kept when it sent those very messages, else counted. */
  private charsOf(messages: readonly ChatMessage[], tools: ModelRequest["tools"]): number {
    const measured = this.measured;
    return measured?.messages === messages ? summedRequestChars(measured.sums, tools) : requestChars(messages, tools);
  }

  private budget(): number {
    return Math.min(this.window - this.answer, this.gauge.ceiling(this.name) ?? Number.POSITIVE_INFINITY);
  }

  private fit(parts: RequestParts, request: ModelRequest, keepAtMost?: number): Fitted {
    // Split from the request itself unless a summary stands in for some of its history: then all kept is the request as it is.
    const whole = this.summary ? undefined : request.messages;
    return fitRequest(parts, request.tools, this.budget(), this.gauge.charsPerToken(this.name), keepAtMost, whole);
  }

  private async send(request: ModelRequest, fitted: Pick<Fitted, "messages">, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    const response = await this.inner.chat({ ...request, messages: fitted.messages }, onDelta);
    // The whole prompt: a cached part counts as much as any (Usage).
    const input = response.usage ? promptTokensOf(response.usage) : 0;
    if (input) this.gauge.observe(response.modelName, this.charsOf(fitted.messages, request.tools), fitted.messages.length, input);
    return response;
  }

  /** The request's history as this turn left it: its summary in place of the exchanges it stands for. */
  private withSummary(parts: RequestParts): RequestParts {
    if (!this.summary) return parts;
    return { ...parts, exchanges: [this.summary.exchange, ...parts.exchanges.slice(this.summary.replaces)] };
  }

  /**
   * The dropped exchanges summarised, and the session's history rewritten
   * with the summary in their place. A summary that fails (the model errs,
   * or writes nothing) leaves everything as it was: they are left out.
   */
  private async summarise(parts: RequestParts, fitted: Fitted, signal: AbortSignal): Promise<RequestParts> {
    const { history, sessionKey } = this.summarize!;
    try {
      const maxChars = Math.floor(this.budget() * this.gauge.charsPerToken(this.name) * 0.75);
      const exchange = await summaryExchange(this.inner, fitted.dropped, maxChars, signal);
      const rest = parts.exchanges.slice(fitted.dropped.length);
      // Records for people (who allowed which call) were never sent to the model: they are kept, first.
      const records = (await history.get(sessionKey)).filter(isRecord);
      await history.replace(sessionKey, [...records, ...exchange, ...rest.flat()]);
      this.summary = { replaces: fitted.dropped.length, exchange };
      return this.withSummary(parts);
    } catch (error) {
      if (signal.aborted) throw error;
      return parts;
    }
  }
}
