import { z } from "zod";
import { ModelError } from "../errors.js";
import { ThinkingReplay } from "./anthropic-thinking.js";
import type { ResponseAssembler } from "./assembler.js";
import { isEventStream, readEvents } from "./body.js";
import { reportedError } from "./http-errors.js";
import type { Usage } from "./provider.js";
import type { ModelAnswer, ReadContext } from "./transport.js";
import { parseJsonText, parseWire, readWhole, streamLimit } from "./wire-json.js";

/**
 * Reading an Anthropic Messages answer, streamed (`message_start`,
 * `content_block_*`, `message_delta`, `message_stop`, `ping`, `error`) or
 * whole. Tool input arrives as `input_json_delta` fragments, joined and
 * checked when the block stops; thinking as `thinking_delta` and
 * `signature_delta`, kept whole for the rest of the turn (ThinkingReplay).
 */

const count = z.number().nullish();
const usage = z.looseObject({ input_tokens: count, output_tokens: count, cache_creation_input_tokens: count, cache_read_input_tokens: count }).nullish();
const errorBody = z.looseObject({ type: z.unknown().optional(), message: z.unknown().optional() });

const block = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  data: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
});

const messageSchema = z.looseObject({
  content: z.array(block),
  stop_reason: z.string().nullish(),
  usage,
});

const eventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: z.looseObject({ usage }) }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number(), content_block: block }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    index: z.number(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      partial_json: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
    }),
  }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number() }),
  z.looseObject({ type: z.literal("message_delta"), delta: z.looseObject({ stop_reason: z.string().nullish() }), usage }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  z.looseObject({ type: z.literal("error"), error: errorBody }),
]);

const KNOWN_EVENTS = new Set(eventSchema.options.map((o) => o.shape.type.value));

/** Anthropic's stop reasons in the words the core uses (OpenAI's). */
export function finishReasonOf(stopReason: string | null | undefined): string | undefined {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_calls";
    default:
      return stopReason ?? undefined;
  }
}

export async function readMessage(response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> {
  if (isEventStream(response)) return readMessageStream(response, out, ctx);
  const json = parseJsonText(ctx.modelName, await readWhole(response, ctx), "the answer", ctx.secrets);
  if ((json as { type?: unknown } | null)?.type === "error") {
    throw reportedError(ctx.modelName, parseWire(errorBody, (json as { error?: unknown }).error, ctx.modelName, "the error"), ctx.secrets);
  }
  const message = parseWire(messageSchema, json, ctx.modelName, "the answer");
  const replay = new ThinkingReplay(out);
  message.content.forEach((b, index) => {
    replay.start(index, b);
    if (b.type === "text") out.text(b.text);
    else if (b.type === "tool_use") out.toolCall({ index, id: b.id ?? undefined, name: b.name ?? undefined, arguments: b.input ?? {} });
  });
  replay.settle();
  out.finish(finishReasonOf(message.stop_reason));
  out.usage(usageOf(message.usage));
}

/** Anthropic's usage in the core's words; counts it leaves out stay unset. */
function usageOf(value: z.output<typeof usage>): Usage {
  return {
    inputTokens: value?.input_tokens ?? undefined,
    outputTokens: value?.output_tokens ?? undefined,
    cacheCreationInputTokens: value?.cache_creation_input_tokens ?? undefined,
    cacheReadInputTokens: value?.cache_read_input_tokens ?? undefined,
  };
}

async function readMessageStream(response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> {
  const toolBlocks = new Set<number>();
  const replay = new ThinkingReplay(out);
  let stopped = false;
  await readEvents(
    response.body,
    (raw) => {
      if (raw.data.trim() === "") return false;
      const json = parseJsonText(ctx.modelName, raw.data, "a stream event", ctx.secrets) as { type?: unknown } | null;
      const type = json?.type ?? raw.event;
      if (typeof type !== "string" || !KNOWN_EVENTS.has(type as never)) return false; // newer event kinds: ignore
      const event = parseWire(eventSchema, { ...json, type }, ctx.modelName, `a ${type} event`);
      // A ping says the connection lives, not that the answer moves: it does not hold off request_timeout.
      if (event.type !== "ping") ctx.activity();
      switch (event.type) {
        case "message_start":
          out.usage(usageOf(event.message.usage));
          break;
        case "content_block_start": {
          const b = event.content_block;
          replay.start(event.index, b);
          if (b.type === "text") out.text(b.text);
          else if (b.type === "tool_use") {
            toolBlocks.add(event.index);
            const input = isNonEmptyObject(b.input) ? b.input : undefined;
            out.toolCall({ index: event.index, id: b.id ?? undefined, name: b.name ?? undefined, arguments: input });
          }
          break;
        }
        case "content_block_delta": {
          const d = event.delta;
          if (d.type === "text_delta") {
            out.text(d.text);
            replay.text(event.index, d.text);
          } else if (d.type === "thinking_delta" || d.type === "signature_delta") replay.delta(event.index, d);
          else if (d.type === "input_json_delta" && toolBlocks.has(event.index)) out.toolCall({ index: event.index, arguments: d.partial_json ?? "" });
          break;
        }
        case "content_block_stop":
          if (toolBlocks.has(event.index)) settleInput(event.index, out, ctx.modelName);
          break;
        case "message_delta":
          out.finish(finishReasonOf(event.delta.stop_reason));
          out.usage(usageOf(event.usage));
          break;
        case "message_stop":
          stopped = true;
          return true;
        case "ping":
          break;
        case "error":
          throw reportedError(ctx.modelName, event.error, ctx.secrets);
      }
      return false;
    },
    streamLimit(ctx.modelName),
  );
  if (!stopped && !out.finished) {
    throw new ModelError("bad_response", ctx.modelName, "the stream ended before the answer was complete (no message_stop)");
  }
  replay.settle();
}

/** The joined `input_json_delta` fragments must make one JSON object ("" means no input). */
function settleInput(index: number, out: ResponseAssembler, modelName: string): void {
  const joined = out.argumentsOf(index).trim();
  if (joined === "") {
    out.settleArguments(index, "{}");
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(joined);
  } catch {
    throw new ModelError("bad_response", modelName, `the input of tool_use block ${index} is not valid JSON: ${joined.slice(0, 80)}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new ModelError("bad_response", modelName, `the input of tool_use block ${index} is not a JSON object`);
  }
}

function isNonEmptyObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0;
}
