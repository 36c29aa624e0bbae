import { z } from "zod";
import { RequestError } from "../../errors.js";
import type { ImageInput } from "../../runtime/turn/images.js";
import type { ConversationInput, Sampling } from "../../runtime/options.js";
import { CHAT_ID } from "../../session/key.js";
import { describeIssues } from "../../validation.js";
import { fromOpenAIContent } from "../images.js";

/**
 * A `POST /v1/chat/completions` body, in OpenAI's shape. Sampling and
 * structure (`temperature`, `top_p`, `max_tokens` / `max_completion_tokens`,
 * `stop`, `seed`, `response_format`, `parallel_tool_calls`) reach the model
 * over its entry's settings; other fields are ignored (README, "Use it from
 * OpenAI clients"); a client's `tools` are not offered yet.
 */
const message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  // A string or a list of parts, read by fromOpenAIContent (which names what is wrong in a part).
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
  tool_calls: z.array(z.unknown()).nullish(),
});
const body = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1, "expected at least one message"),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  user: z.string().nullish(),
  n: z.literal(1, { error: "only n: 1 is supported (one answer a request)" }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.int().min(1).nullish(),
  max_completion_tokens: z.int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z.int().nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: z
    .discriminatedUnion("type", [
      z.looseObject({ type: z.literal("text") }),
      z.looseObject({ type: z.literal("json_object") }),
      z.looseObject({
        type: z.literal("json_schema"),
        json_schema: z.looseObject({
          name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "expected 1-64 letters, digits, _ or -"),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullish(),
        }),
      }),
    ])
    .nullish(),
});

/** What the body asks of the model's answers, or undefined when it asks nothing. */
function samplingOf(data: z.infer<typeof body>): Sampling | undefined {
  const sampling: Sampling = {};
  if (typeof data.temperature === "number") sampling.temperature = data.temperature;
  if (typeof data.top_p === "number") sampling.topP = data.top_p;
  const maxTokens = data.max_completion_tokens ?? data.max_tokens;
  if (typeof maxTokens === "number") sampling.maxTokens = maxTokens;
  if (typeof data.stop === "string") sampling.stop = [data.stop];
  else if (Array.isArray(data.stop)) sampling.stop = data.stop;
  if (typeof data.seed === "number") sampling.seed = data.seed;
  if (typeof data.parallel_tool_calls === "boolean") sampling.parallelToolCalls = data.parallel_tool_calls;
  const format = data.response_format;
  if (format?.type === "json_object") sampling.responseFormat = { type: "json_object" };
  else if (format?.type === "json_schema") {
    const { name, schema, strict } = format.json_schema;
    sampling.responseFormat = { type: "json_schema", name, schema: schema ?? {}, ...(typeof strict === "boolean" ? { strict } : {}) };
  }
  return Object.keys(sampling).length > 0 ? sampling : undefined;
}

/** What a request asks, read: the agent, how to stream, and the message with its conversation. */
export interface CompletionRequest {
  agentId: string;
  stream: boolean;
  includeUsage: boolean;
  /** The new message: the last one, a user's; its text and images. */
  text: string;
  images: ImageInput[];
  /** What the request asks of the model's answers (sampling, structure). */
  sampling?: Sampling;
  /** A session the request continues (`X-Session-Id`, or `user`), or a stateless conversation carried whole. */
  conversation: { session: string } | { history: ConversationInput["history"]; system: string[] };
}

type Message = z.infer<typeof message>;

/** A message's text and images: a string, or its `text` and `image_url` parts; only a user's message may carry images. */
function contentOf(m: Message, i: number): { text: string; images: ImageInput[] } {
  if (m.content === undefined || m.content === null) return { text: "", images: [] };
  const read = fromOpenAIContent(m.content, ["messages", i, "content"]);
  if (read.images.length > 0 && m.role !== "user") {
    throw new RequestError("invalid_request", `messages[${i}].content: only the user's messages may carry images (this one is the ${m.role}'s)`);
  }
  return read;
}

/** The request read and checked; `400 invalid_request` naming the field otherwise. */
export function readCompletionRequest(json: unknown, sessionHeader: string | undefined): CompletionRequest {
  const parsed = body.safeParse(json, { reportInput: true });
  if (!parsed.success) throw new RequestError("invalid_request", describeIssues(parsed.error).join("; "));
  const { model, messages, stream, stream_options, user } = parsed.data;
  messages.forEach((m, i) => {
    if (m.role === "tool" || m.role === "function" || (m.tool_calls?.length ?? 0) > 0) {
      throw new RequestError(
        "invalid_request",
        `messages[${i}]: tool calls and tool results are not accepted: the agent runs its own tools, and a client's tools are never run here`,
      );
    }
  });
  const last = messages.length - 1;
  if (messages[last]!.role !== "user") {
    throw new RequestError("invalid_request", `messages[${last}]: the last message must be the user's (got role ${JSON.stringify(messages[last]!.role)})`);
  }
  const { text, images } = contentOf(messages[last]!, last);
  const session = sessionHeader?.trim() || user || undefined;
  const sampling = samplingOf(parsed.data);
  const base = {
    agentId: model,
    stream: stream ?? false,
    includeUsage: stream_options?.include_usage ?? false,
    text,
    images,
    ...(sampling ? { sampling } : {}),
  };
  if (session !== undefined) {
    if (!CHAT_ID.test(session)) {
      const where = sessionHeader?.trim() ? "X-Session-Id" : "user";
      throw new RequestError(
        "invalid_request",
        `${where}: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${JSON.stringify(session.slice(0, 200))})`,
      );
    }
    return { ...base, conversation: { session } };
  }
  const system: string[] = [];
  const history: ConversationInput["history"][number][] = [];
  messages.slice(0, last).forEach((m, i) => {
    const { text: content, images: attached } = contentOf(m, i);
    if (m.role === "system" || m.role === "developer") system.push(content);
    else if (m.role === "assistant") {
      if (content !== "") history.push({ role: "assistant", content });
    } else if (attached.length === 0) history.push({ role: "user", content });
    else {
      const parts = attached.map((image) => ({ type: "image_url" as const, image_url: image }));
      history.push({ role: "user", content: content === "" ? parts : [{ type: "text", text: content }, ...parts] });
    }
  });
  return { ...base, conversation: { history, system } };
}
