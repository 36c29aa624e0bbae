import { promptTokensOf } from "../../runtime/turn/usage.js";
import type { Context, Hono } from "hono";
import { nanoid } from "nanoid";
import { z } from "zod";
import { RequestError } from "../../errors.js";
import type { Logger } from "../../log.js";
import type { ChatMessage, ConversationInput, MessageOutcome, Sampling, ToolCall, ToolSpec } from "../../runtime/options.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { MessageEvent } from "../../runtime/streams/message-stream.js";
import { joinSignals } from "../../signals.js";
import { madeOnFirstUse, parseReporting, problemsLine } from "../../validation.js";
import { failureOf } from "../errors.js";
import { readJson } from "../read-json.js";
import { BoundedMap } from "../bounded-map.js";
import { SseAnswer, type SseOptions } from "../sse.js";
import { OPENAI_CHANNEL } from "./channel.js";
import { AssistantContent } from "./completion.js";
import { modelNotFound, refuseToolClash } from "./routes.js";
import { samplingFrom } from "./sampling.js";

/**
 * OpenAI's Responses API over the agents (README, "Use it from OpenAI
 * clients"): `POST /v1/responses` with a string or items as `input`,
 * `instructions`, the client's function `tools` and `tool_choice`,
 * `function_call_output` items continuing a turn, `previous_response_id`
 * continuing a stored response, `store: false`; whole or streamed with the
 * typed events; `GET /v1/responses/<id>`. Each request runs as a
 * conversation the client keeps (stateless), its earlier part taken from
 * the stored response it continues. Stored responses are bounded (count and
 * bytes, the oldest going first) and kept for a day.
 */

/** A request body's schema, made with the first request that needs it. */
const body = madeOnFirstUse(() => {
  const contentPart = z.looseObject({ type: z.string(), text: z.string().optional(), image_url: z.string().optional() });
  const item = z.union([
    z.looseObject({
      type: z.literal("message").optional(),
      role: z.enum(["user", "assistant", "system", "developer"]),
      content: z.union([z.string(), z.array(contentPart)]),
    }),
    z.looseObject({ type: z.literal("function_call"), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() }),
    z.looseObject({ type: z.literal("function_call_output"), call_id: z.string().min(1), output: z.string() }),
  ]);
  const tool = z.looseObject({
    type: z.literal("function"),
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "expected 1-64 letters, digits, _ or -"),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  });
  return z.looseObject({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(item).min(1)]),
    instructions: z.string().nullish(),
    tools: z.array(tool).max(128).nullish(),
    tool_choice: z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: z.string() })]).nullish(),
    previous_response_id: z.string().nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    max_output_tokens: z.int().min(1).nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .looseObject({
        format: z
          .looseObject({
            type: z.enum(["text", "json_object", "json_schema"]),
            name: z.string().optional(),
            schema: z.record(z.string(), z.unknown()).optional(),
            strict: z.boolean().nullish(),
          })
          .nullish(),
      })
      .nullish(),
  });
});
type Body = z.output<ReturnType<typeof body>>;
/** A part of a message item's content. */
type ContentPart = { type: string; text?: string | undefined; image_url?: string | undefined };

/** How long a stored response is kept. */
const KEEP_MS = 24 * 3600_000;

export interface ResponseLimits {
  maxResponses: number;
  maxBytes: number;
}

interface Stored {
  response: Record<string, unknown>;
  /** The conversation up to and with this response, for one that continues it. */
  messages: ChatMessage[];
  system: string[];
}

/** Stored responses, bounded: past the limits (or a day) the oldest go first. */
class ResponseStore {
  private readonly kept: BoundedMap<Stored>;

  constructor(private readonly limits: ResponseLimits) {
    this.kept = new BoundedMap<Stored>({ maxEntries: limits.maxResponses, maxBytes: limits.maxBytes, ttlMs: KEEP_MS });
  }

  get(id: string): Stored | undefined {
    return this.kept.get(id);
  }

  put(id: string, stored: Stored): void {
    const bytes = Buffer.byteLength(JSON.stringify([stored.response, stored.messages, stored.system]));
    if (this.limits.maxResponses === 0 || bytes > this.limits.maxBytes) return;
    this.kept.set(id, stored, bytes);
  }
}

/** Text of a message item's content (its text parts); images are refused with a clear error. */
function textOf(content: string | ContentPart[], at: string): string {
  if (typeof content === "string") return content;
  return content
    .map((part, i) => {
      if (part.type === "input_text" || part.type === "output_text" || part.type === "text") return part.text ?? "";
      throw new RequestError("invalid_request", `${at}.content[${i}].type: ${JSON.stringify(part.type)} parts are not taken here (text only)`);
    })
    .join("\n\n");
}

interface Read {
  conversation: Pick<ConversationInput, "history" | "system" | "text" | "toolResults">;
  clientTools: ToolSpec[];
  sampling: Sampling | undefined;
}

/** The request as a conversation: the stored one it continues, then its input. */
function readRequest(data: Body, previous: Stored | undefined): Read {
  const clientTools = (data.tools ?? []).map(
    (t): ToolSpec => ({ name: t.name, description: t.description ?? "", parameters: t.parameters ?? { type: "object", properties: {} } }),
  );
  const history: ChatMessage[] = [...(previous?.messages ?? [])];
  const system = [...(previous?.system ?? []), ...(data.instructions ? [data.instructions] : [])];
  const items = typeof data.input === "string" ? [{ role: "user" as const, content: data.input }] : data.input;
  items.forEach((entry, i) => {
    const at = `input[${i}]`;
    if ("role" in entry && !("call_id" in entry)) {
      const text = textOf(entry.content as string | ContentPart[], at);
      if (entry.role === "system" || entry.role === "developer") system.push(text);
      else history.push(entry.role === "user" ? { role: "user", content: text } : { role: "assistant", content: text });
    } else if (entry.type === "function_call") {
      const call: ToolCall = { id: entry.call_id, type: "function", function: { name: entry.name, arguments: entry.arguments } };
      const last = history.at(-1);
      // Calls of one answer are one assistant message.
      // A new message, not the last one changed: it may be a stored one (the previous response's).
      if (last?.role === "assistant" && last.tool_calls && last.content === null)
        history[history.length - 1] = { ...last, tool_calls: [...last.tool_calls, call] };
      else history.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (entry.type === "function_call_output") {
      history.push({ role: "tool", tool_call_id: entry.call_id, content: entry.output });
    }
  });
  // A conversation that ends with function call outputs goes on from them; otherwise from the last user message.
  let end = history.length;
  while (end > 0 && history[end - 1]!.role === "tool") end--;
  const toolResults = history.slice(end).map((m) => ({ toolCallId: (m as { tool_call_id: string }).tool_call_id, content: String(m.content) }));
  let text = "";
  if (toolResults.length === 0) {
    const last = history.pop();
    if (last?.role !== "user") throw new RequestError("invalid_request", "input: the last item must be the user's message, or the outputs of function calls");
    text = typeof last.content === "string" ? last.content : "";
  } else history.splice(end);
  const choice = data.tool_choice;
  const sampling = samplingFrom({
    temperature: data.temperature,
    topP: data.top_p,
    maxTokens: data.max_output_tokens,
    parallelToolCalls: data.parallel_tool_calls,
    toolChoice: typeof choice === "string" || !choice ? choice : { name: choice.name },
    format: data.text?.format,
  });
  return {
    conversation: { history, system, text, ...(toolResults.length > 0 ? { toolResults } : {}) },
    clientTools,
    sampling,
  };
}

/** The response object, OpenAI's shape. */
function responseObject(
  meta: { id: string; created: number; model: string; data: Body },
  status: string,
  output: unknown[],
  outcome?: MessageOutcome,
  error?: unknown,
) {
  const usage = outcome?.usage
    ? {
        input_tokens: promptTokensOf(outcome.usage),
        ...(outcome.usage.cacheReadInputTokens === undefined ? {} : { input_tokens_details: { cached_tokens: outcome.usage.cacheReadInputTokens } }),
        output_tokens: outcome.usage.outputTokens,
        total_tokens: promptTokensOf(outcome.usage) + outcome.usage.outputTokens,
      }
    : null;
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status,
    model: meta.model,
    output,
    instructions: meta.data.instructions ?? null,
    previous_response_id: meta.data.previous_response_id ?? null,
    tools: meta.data.tools ?? [],
    tool_choice: meta.data.tool_choice ?? "auto",
    parallel_tool_calls: meta.data.parallel_tool_calls ?? true,
    store: meta.data.store ?? true,
    error: error ?? null,
    incomplete_details: outcome?.truncated ? { reason: "max_output_tokens" } : null,
    usage,
  };
}

/** The output items of an outcome: its message (when it has text), then the client's function calls. */
function outputOf(text: string, outcome: MessageOutcome): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (text !== "") items.push(messageItem(`msg_${nanoid(20)}`, text, "completed"));
  for (const call of outcome.clientCalls ?? []) items.push(callItem(call, "completed"));
  return items;
}

const messageItem = (id: string, text: string, status: string) => ({
  type: "message",
  id,
  status,
  role: "assistant",
  content: status === "completed" ? [{ type: "output_text", text, annotations: [] }] : [],
});
const callItem = (call: ToolCall, status: string, args = call.function.arguments) => ({
  type: "function_call",
  id: `fc_${call.id}`,
  call_id: call.id,
  name: call.function.name,
  arguments: args,
  status,
});

export function mountResponses(app: Hono, runtime: Runtime, limits: ResponseLimits, streams: SseOptions & { logger: Logger }): void {
  const store = new ResponseStore(limits);

  app.get("/v1/responses/:id", (c) => {
    const found = store.get(c.req.param("id"));
    if (!found) throw new RequestError("not_found", `no stored response ${JSON.stringify(c.req.param("id"))}`);
    return c.json(found.response);
  });

  app.post("/v1/responses", async (c) => {
    const parsed = parseReporting(body(), await readJson(c.req.raw));
    if (!parsed.success) throw new RequestError("invalid_request", problemsLine(parsed.error));
    const data = parsed.data;
    if (!runtime.agentIds().includes(data.model)) throw modelNotFound(data.model);
    const previous = data.previous_response_id ? store.get(data.previous_response_id) : undefined;
    if (data.previous_response_id && !previous)
      throw new RequestError("not_found", `previous_response_id: no stored response ${JSON.stringify(data.previous_response_id)}`);
    const read = readRequest(data, previous);
    refuseToolClash(runtime, data.model, read.clientTools);
    const input: ConversationInput = {
      agentId: data.model,
      channel: OPENAI_CHANNEL,
      ...read.conversation,
      ...(read.clientTools.length > 0 ? { clientTools: read.clientTools } : {}),
      ...(read.sampling ? { sampling: read.sampling } : {}),
    };
    runtime.checkConversation(input);
    const meta = { id: `resp_${nanoid(24)}`, created: Math.floor(Date.now() / 1000), model: data.model, data };
    /** Keeps the finished response (unless `store: false`), with the conversation it closes. */
    const keep = (response: Record<string, unknown>, text: string, outcome: MessageOutcome) => {
      if (data.store === false) return;
      const messages: ChatMessage[] = [
        ...read.conversation.history,
        ...(read.conversation.toolResults?.length
          ? read.conversation.toolResults.map((r): ChatMessage => ({ role: "tool", tool_call_id: r.toolCallId, content: r.content }))
          : [{ role: "user" as const, content: read.conversation.text }]),
        ...(outcome.clientCalls
          ? [{ role: "assistant" as const, content: text === "" ? null : text, tool_calls: outcome.clientCalls }]
          : [{ role: "assistant" as const, content: text }]),
      ];
      store.put(meta.id, { response, messages, system: [...(read.conversation.system ?? [])] });
    };
    if (!data.stream) {
      const content = new AssistantContent();
      let text = "";
      const outcome = await runtime.converse({ ...input, signal: c.req.raw.signal, onEvent: (event) => (text += content.add(event)) });
      text += content.end(outcome);
      const response = responseObject(meta, "completed", outputOf(text, outcome), outcome);
      keep(response, text, outcome);
      return c.json(response);
    }
    return streamed(c, runtime, input, meta, keep, streams);
  });
}

/** The typed events of a streamed response, in order, each with its sequence number. */
function streamed(
  c: Context,
  runtime: Runtime,
  input: ConversationInput,
  meta: Parameters<typeof responseObject>[0],
  keep: (response: Record<string, unknown>, text: string, outcome: MessageOutcome) => void,
  opts: SseOptions & { logger: Logger },
): Response {
  const answer = new SseAnswer(c, opts);
  const signal = joinSignals([c.req.raw.signal, answer.signal]);
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) =>
    answer.send(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  send("response.created", { response: responseObject(meta, "in_progress", []) });
  send("response.in_progress", { response: responseObject(meta, "in_progress", []) });
  const messageId = `msg_${nanoid(20)}`;
  let opened = false;
  let text = "";
  const content = new AssistantContent();
  const piece = (delta: string) => {
    if (delta === "") return;
    if (!opened) {
      opened = true;
      send("response.output_item.added", { output_index: 0, item: messageItem(messageId, "", "in_progress") });
      send("response.content_part.added", { item_id: messageId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    }
    text += delta;
    send("response.output_text.delta", { item_id: messageId, output_index: 0, content_index: 0, delta });
  };
  runtime
    .converse({ ...input, signal: signal.signal, onEvent: (event: MessageEvent) => piece(content.add(event)) })
    .then(
      (outcome) => {
        piece(content.end(outcome));
        const output: Record<string, unknown>[] = [];
        if (opened) {
          send("response.output_text.done", { item_id: messageId, output_index: 0, content_index: 0, text });
          send("response.content_part.done", { item_id: messageId, output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [] } });
          const done = messageItem(messageId, text, "completed");
          send("response.output_item.done", { output_index: 0, item: done });
          output.push(done);
        }
        for (const call of outcome.clientCalls ?? []) {
          const index = output.length;
          const item = callItem(call, "completed");
          send("response.output_item.added", { output_index: index, item: callItem(call, "in_progress", "") });
          send("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta: call.function.arguments });
          send("response.function_call_arguments.done", { item_id: item.id, output_index: index, arguments: call.function.arguments });
          send("response.output_item.done", { output_index: index, item });
          output.push(item);
        }
        const response = responseObject(meta, "completed", output, outcome);
        keep(response, text, outcome);
        send("response.completed", { response });
        answer.end();
      },
      (error: unknown) => {
        const { code, message } = failureOf(error, `${c.req.method} ${c.req.path}`, opts.logger);
        send("response.failed", { response: responseObject(meta, "failed", [], undefined, { code, message }) });
        answer.end();
      },
    )
    .finally(() => signal.dispose());
  return answer.response();
}
