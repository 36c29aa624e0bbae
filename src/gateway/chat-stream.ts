import type { Context } from "hono";
import type { Logger } from "../log.js";
import type { TokenUsage } from "../port/events.js";
import type { MessageEvent } from "../runtime/streams/message-stream.js";
import type { MessageInput, MessageOutcome } from "../runtime/options.js";
import type { Runtime } from "../runtime/runtime.js";
import { joinSignals } from "../signals.js";
import { failureOf } from "./errors.js";
import { SseAnswer, type SseOptions, sessionItemEvent, sseEvent } from "./sse.js";

/** The JSON body of a `POST /v1/chat` answer (and the data of a streamed answer's `turn.end`). */
export function chatAnswer(outcome: MessageOutcome): Record<string, unknown> {
  return {
    agent: outcome.agentId,
    session_key: outcome.sessionKey,
    reply: outcome.reply,
    // What reached the session while nobody was watching comes first, once (never after /clear).
    delivered: [...outcome.earlier, ...outcome.delivered],
    // A turn /stop ended is answered, not failed: clients retry 5xx and 409, which would run it again.
    ...(outcome.stopped ? { stopped: true } : {}),
    // The message answered an ask_user question: the turn that asked goes on, and answers its own request.
    ...(outcome.answered ? { answered: true } : {}),
    ...(outcome.usage ? { usage: chatUsage(outcome.usage) } : {}),
  };
}

/** `/v1/chat`'s usage, in Anthropic's words: the cache's reads and writes apart, when the provider reported them. */
function chatUsage(usage: TokenUsage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    ...(usage.cacheReadInputTokens === undefined ? {} : { cache_read_input_tokens: usage.cacheReadInputTokens }),
    ...(usage.cacheCreationInputTokens === undefined ? {} : { cache_creation_input_tokens: usage.cacheCreationInputTokens }),
  };
}

/** A message event as `/v1/chat` streams it (README, "HTTP API"): name and JSON data. */
function chatEvent(event: MessageEvent): string {
  switch (event.type) {
    case "turn.start":
      return sseEvent("turn.start", { agent: event.agentId, session_key: event.sessionKey });
    case "text.delta":
      return sseEvent("text.delta", { text: event.text });
    case "tool.start":
      return sseEvent("tool.start", { id: event.id, name: event.name });
    case "tool.end":
      return sseEvent("tool.end", { id: event.id, name: event.name, is_error: event.isError, ...(event.text === undefined ? {} : { text: event.text }) });
    case "delivery":
    case "notice":
      return sessionItemEvent(event);
  }
}

/**
 * `POST /v1/chat` with `"stream": true`: the message's events as Server-Sent
 * Events while it runs, then exactly one of `turn.end` (the JSON the
 * non-streaming call answers) or `error` (`{code, message}`), then the end.
 * A client that leaves (or stops reading) aborts the turn, as a
 * non-streaming client that disconnects does.
 */
export function chatStream(c: Context, runtime: Runtime, input: Omit<MessageInput, "signal" | "onEvent">, opts: SseOptions & { logger: Logger }): Response {
  const answer = new SseAnswer(c, opts);
  const signal = joinSignals([c.req.raw.signal, answer.signal]);
  runtime
    .handleMessage({ ...input, signal: signal.signal, onEvent: (event) => answer.send(chatEvent(event)) })
    .then(
      (outcome) => answer.end(sseEvent("turn.end", chatAnswer(outcome))),
      (error: unknown) => {
        const { code, message } = failureOf(error, `${c.req.method} ${c.req.path}`, opts.logger);
        answer.end(sseEvent("error", { code, message }));
      },
    )
    .finally(() => signal.dispose());
  return answer.response();
}
