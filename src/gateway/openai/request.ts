import { z } from "zod";
import { RequestError } from "../../errors.js";
import type { ImageInput } from "../../runtime/turn/images.js";
import type { ConversationInput, Sampling, ToolSpec } from "../../runtime/options.js";
import { CHAT_ID } from "../../session/key.js";
import { madeOnFirstUse, parseReporting, problemsLine, quoted } from "../../validation.js";
import { fromOpenAIContent } from "../images.js";
import { samplingFrom } from "./sampling.js";

/**
 * A `POST /v1/chat/completions` body, in OpenAI's shape. Sampling and
 * structure (`temperature`, `top_p`, `max_tokens` / `max_completion_tokens`,
 * `stop`, `seed`, `response_format`, `parallel_tool_calls`) reach the model
 * over its entry's settings; other fields are ignored (README, "Use it from
 * OpenAI clients"); a client's `tools` are not offered yet. The schema is
 * made with the first request that needs it.
 */
const body = madeOnFirstUse(() => {
  const toolCall = z.looseObject({
    id: z.string().min(1),
    type: z.literal("function").optional(),
    function: z.looseObject({ name: z.string(), arguments: z.string() }),
  });
  const message = z.looseObject({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    // A string or a list of parts, read by fromOpenAIContent (which names what is wrong in a part).
    content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
    tool_calls: z.array(toolCall).nullish(),
    tool_call_id: z.string().nullish(),
  });
  /** A client's function tool, as OpenAI writes it. */
  const clientTool = z.looseObject({
    type: z.literal("function"),
    function: z.looseObject({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "expected 1-64 letters, digits, _ or -"),
      description: z.string().nullish(),
      parameters: z.record(z.string(), z.unknown()).nullish(),
    }),
  });
  const toolChoice = z.union([
    z.enum(["none", "auto", "required"]),
    z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
  ]);
  return z.looseObject({
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
    tools: z.array(clientTool).max(128).nullish(),
    tool_choice: toolChoice.nullish(),
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
});
type Body = z.infer<ReturnType<typeof body>>;
type Message = Body["messages"][number];

/** What the body asks of the model's answers, or undefined when it asks nothing. */
function samplingOf(data: Body): Sampling | undefined {
  const choice = data.tool_choice;
  const format = data.response_format;
  return samplingFrom({
    temperature: data.temperature,
    topP: data.top_p,
    maxTokens: data.max_completion_tokens ?? data.max_tokens,
    stop: data.stop,
    seed: data.seed,
    parallelToolCalls: data.parallel_tool_calls,
    toolChoice: typeof choice === "string" || !choice ? choice : { name: choice.function.name },
    format: format?.type === "json_schema" ? { type: "json_schema", ...format.json_schema } : format,
  });
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
  /** The client's own tools, offered beside the agent's. */
  clientTools?: ToolSpec[];
  /** The client's results of the tool calls the last answer ended with: the turn goes on from them. */
  toolResults?: { toolCallId: string; content: string }[];
  /** A session the request continues (`X-Session-Id`, or `user`), or a stateless conversation carried whole. */
  conversation: { session: string } | { history: ConversationInput["history"]; system: string[] };
}

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
  const parsed = parseReporting(body(), json);
  if (!parsed.success) throw new RequestError("invalid_request", problemsLine(parsed.error));
  const { model, messages, stream, stream_options, user } = parsed.data;
  const clientTools = (parsed.data.tools ?? []).map(
    (tool): ToolSpec => ({
      name: tool.function.name,
      description: tool.function.description ?? "",
      parameters: tool.function.parameters ?? { type: "object", properties: {} },
    }),
  );
  const names = new Set(clientTools.map((tool) => tool.name));
  if (names.size < clientTools.length) throw new RequestError("invalid_request", "tools: two tools have one name");
  const choice = parsed.data.tool_choice;
  if (choice && typeof choice !== "string" && !names.has(choice.function.name)) {
    throw new RequestError("invalid_request", `tool_choice: there is no tool named ${JSON.stringify(choice.function.name)} in tools`);
  }
  messages.forEach((m, i) => {
    // Tool calls and results in a conversation are the client's own tools' (the agent's never leave the gateway).
    const calls = m.tool_calls ?? [];
    if (m.role === "function" || ((m.role === "tool" || calls.length > 0) && names.size === 0)) {
      throw new RequestError(
        "invalid_request",
        `messages[${i}]: tool calls and tool results are accepted for the client's own tools only (send them in tools); the agent runs its own`,
      );
    }
    calls.forEach((call, j) => {
      if (!names.has(call.function.name)) {
        throw new RequestError("invalid_request", `messages[${i}].tool_calls[${j}]: ${JSON.stringify(call.function.name)} is not one of the request's tools`);
      }
    });
    if (m.role === "tool" && !m.tool_call_id) throw new RequestError("invalid_request", `messages[${i}]: a tool message needs its tool_call_id`);
  });
  // A conversation that ends with the client's tool results goes on from them; otherwise the last message is the user's.
  let last = messages.length - 1;
  while (last >= 0 && messages[last]!.role === "tool") last--;
  const toolResults = messages.slice(last + 1).map((m, k) => ({ toolCallId: m.tool_call_id!, content: contentOf(m, last + 1 + k).text }));
  if (toolResults.length > 0 && (last < 0 || messages[last]!.role !== "assistant" || !(messages[last]!.tool_calls?.length ?? 0))) {
    throw new RequestError("invalid_request", `messages[${last + 1}]: tool results must follow the assistant message whose tool_calls they answer`);
  }
  if (toolResults.length === 0 && messages[last]!.role !== "user") {
    throw new RequestError(
      "invalid_request",
      `messages[${last}]: the last message must be the user's, or the results of its tool calls (got role ${JSON.stringify(messages[last]!.role)})`,
    );
  }
  const { text, images } = toolResults.length > 0 ? { text: "", images: [] } : contentOf(messages[last]!, last);
  const session = sessionHeader?.trim() || user || undefined;
  const sampling = samplingOf(parsed.data);
  const base = {
    agentId: model,
    stream: stream ?? false,
    includeUsage: stream_options?.include_usage ?? false,
    text,
    images,
    ...(sampling ? { sampling } : {}),
    ...(clientTools.length > 0 ? { clientTools } : {}),
    ...(toolResults.length > 0 ? { toolResults } : {}),
  };
  if (session !== undefined) {
    if (!CHAT_ID.test(session)) {
      const where = sessionHeader?.trim() ? "X-Session-Id" : "user";
      throw new RequestError("invalid_request", `${where}: expected 1-128 characters: letters, digits and . _ ~ @ + = - (got ${quoted(session)})`);
    }
    return { ...base, conversation: { session } };
  }
  const system: string[] = [];
  const history: ConversationInput["history"][number][] = [];
  // Before the new message (or, for a continuation, up to and with the assistant's tool calls).
  const earlier = toolResults.length > 0 ? last + 1 : last;
  messages.slice(0, earlier).forEach((m, i) => {
    const { text: content, images: attached } = contentOf(m, i);
    if (m.role === "system" || m.role === "developer") system.push(content);
    else if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((call) => ({
        id: call.id,
        type: "function" as const,
        function: { name: call.function.name, arguments: call.function.arguments },
      }));
      if (calls.length > 0) history.push({ role: "assistant", content: content === "" ? null : content, tool_calls: calls });
      else if (content !== "") history.push({ role: "assistant", content });
    } else if (m.role === "tool") history.push({ role: "tool", tool_call_id: m.tool_call_id!, content });
    else if (attached.length === 0) history.push({ role: "user", content });
    else {
      const parts = attached.map((image) => ({ type: "image_url" as const, image_url: image }));
      history.push({ role: "user", content: content === "" ? parts : [{ type: "text", text: content }, ...parts] });
    }
  });
  return { ...base, conversation: { history, system } };
}
