import type { EventSourceMessage } from "eventsource-parser";
import { z } from "zod";
import { ModelError } from "../errors.js";
import type { ResponseAssembler } from "./assembler.js";
import { isEventStream, readEvents } from "./body.js";
import { reportedError } from "./http-errors.js";
import type { ModelAnswer, ReadContext } from "./transport.js";
import { parseJsonText, parseWire, readWhole, streamLimit } from "./wire-json.js";

/**
 * Reading an OpenAI-compatible chat-completions answer, streamed or whole.
 * The shapes are lenient on purpose: local servers leave out ids and
 * indexes, send arguments as objects, or `null` where OpenAI sends `""`.
 */

const text = z.string().nullish();

/** `content` is a string, or (Mistral and some proxies) a list of typed parts. */
const content = z.union([z.string(), z.array(z.looseObject({ type: z.string().nullish(), text: z.string().nullish() }))]).nullish();

const toolCallPart = z.looseObject({
  index: z.number().nullish(),
  id: text,
  function: z
    .looseObject({
      name: text,
      arguments: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
    })
    .nullish(),
});

const messagePart = z.looseObject({
  content,
  refusal: text,
  reasoning_content: text,
  reasoning: text,
  tool_calls: z.array(toolCallPart).nullish(),
});

const errorField = z.union([
  z.string(),
  z.looseObject({ message: z.unknown().optional(), code: z.unknown().optional(), type: z.unknown().optional(), status: z.unknown().optional() }),
]);

const count = z.number().nullish();
const usage = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  /** OpenAI's prompt caching. */
  prompt_tokens_details: z.looseObject({ cached_tokens: count }).nullish(),
  /** DeepSeek's. */
  prompt_cache_hit_tokens: count,
});

const chunkSchema = z.looseObject({
  choices: z.array(z.looseObject({ index: z.number().nullish(), delta: messagePart.nullish(), finish_reason: text })).nullish(),
  usage: usage.nullish(),
  error: errorField.nullish(),
});

const completionSchema = z.looseObject({
  choices: z.array(z.looseObject({ message: messagePart, finish_reason: text })).min(1),
  usage: usage.nullish(),
});

type MessagePart = z.output<typeof messagePart>;

/** Reads the answer by its content type: an SSE stream, or one JSON document (also when a server ignores `stream`). */
export async function readChatCompletion(response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> {
  if (isEventStream(response)) return readChatStream(response, out, ctx);
  const json = parseJsonText(ctx.modelName, await readWhole(response, ctx), "the answer", ctx.secrets);
  const error = (json as { error?: unknown } | null)?.error;
  if (error && !(json as { choices?: unknown }).choices) {
    throw reportedError(ctx.modelName, parseWire(errorField, error, ctx.modelName, "the error"), ctx.secrets);
  }
  const completion = parseWire(completionSchema, json, ctx.modelName, "the answer");
  const choice = completion.choices[0]!;
  applyMessage(choice.message, out);
  out.finish(choice.finish_reason);
  applyUsage(completion.usage, out);
}

async function readChatStream(response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> {
  let done = false;
  await readEvents(
    response.body,
    (event: EventSourceMessage) => {
      const data = event.data.trim();
      if (data === "[DONE]") return (done = true);
      if (data === "") return false;
      ctx.activity();
      const chunk = parseWire(chunkSchema, parseJsonText(ctx.modelName, data, "a stream event", ctx.secrets), ctx.modelName, "a stream event");
      if (chunk.error) throw reportedError(ctx.modelName, chunk.error, ctx.secrets);
      for (const choice of chunk.choices ?? []) {
        if ((choice.index ?? 0) !== 0) continue;
        if (choice.delta) applyMessage(choice.delta, out);
        out.finish(choice.finish_reason);
      }
      applyUsage(chunk.usage, out);
      return false;
    },
    streamLimit(ctx.modelName),
  );
  if (!done && !out.finished) {
    throw new ModelError("bad_response", ctx.modelName, "the stream ended before the answer was complete (no finish_reason and no [DONE])");
  }
}

/** A whole message and a delta have the same fields: both go through here. */
function applyMessage(message: MessagePart, out: ResponseAssembler): void {
  // Servers name the field differently (DeepSeek, vLLM: reasoning_content; Ollama, OpenRouter: reasoning); it goes back as it came.
  if (message.reasoning_content) {
    out.reasoningField("reasoning_content");
    out.reasoning(message.reasoning_content);
  } else if (message.reasoning) {
    out.reasoningField("reasoning");
    out.reasoning(message.reasoning);
  }
  if (typeof message.content === "string") out.text(message.content);
  else for (const part of message.content ?? []) if (part.type === "text" || part.type == null) out.text(part.text);
  out.text(message.refusal);
  for (const call of message.tool_calls ?? []) {
    out.toolCall({
      index: call.index ?? undefined,
      id: call.id ?? undefined,
      name: call.function?.name ?? undefined,
      arguments: call.function?.arguments ?? undefined,
    });
  }
}

function applyUsage(value: z.output<typeof usage> | null | undefined, out: ResponseAssembler): void {
  if (!value) return;
  const cached = value.prompt_tokens_details?.cached_tokens ?? value.prompt_cache_hit_tokens ?? undefined;
  const prompt = value.prompt_tokens ?? undefined;
  out.usage({
    // OpenAI counts cached tokens inside prompt_tokens; the core counts them apart (Usage).
    inputTokens: prompt === undefined ? undefined : Math.max(0, prompt - (cached ?? 0)),
    outputTokens: value.completion_tokens ?? undefined,
    cacheReadInputTokens: cached,
  });
}
