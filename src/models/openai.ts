import { z } from "zod";
import type { ModelEntry } from "../config/schema.js";
import { ModelError } from "../errors.js";
import { visibleContent } from "./content.js";
import { detailOf, restate } from "./http-errors.js";
import { HttpModelProvider } from "./http-provider.js";
import type { ChatMessage, ToolSpec } from "./message.js";
import type { ResponseAssembler } from "./assembler.js";
import { type JsonText, jsonTextFor } from "./json-text.js";
import type { ModelDelta, ModelRequest, ModelResponse } from "./provider.js";
import { type ModelAnswer, type ReadContext, type TransportOptions, type WireRequest, mergeExtraBody } from "./transport.js";

/** The answer's reader (its wire schemas) is imported with the first answer: a gateway that never calls this provider never loads it. */
let decoder: Promise<typeof import("./openai-decode.js")> | undefined;
const readChatCompletion = async (response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> =>
  (await (decoder ??= import("./openai-decode.js"))).readChatCompletion(response, out, ctx);

export const OPENAI_DEFAULT_BASE = "https://api.openai.com/v1";

/** The entry keys only this provider takes (`otherwise`: what a provider that does not take one offers instead). */
export const OPENAI_OPTIONS = {
  max_tokens_field: {
    schema: z
      .enum(["max_tokens", "max_completion_tokens"])
      .describe("openai: the field max_tokens is sent as (default max_completion_tokens for o-series and gpt-5 models, max_tokens for the rest)."),
    otherwise: "the Messages API always takes max_tokens",
  },
  reasoning_effort: {
    schema: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).describe("openai: sent as reasoning_effort, for reasoning models that take it."),
    otherwise: "for Claude, use thinking",
  },
} as const;

/** An entry of provider `openai`, with its own options. */
export type OpenAIEntry = ModelEntry & { [K in keyof typeof OPENAI_OPTIONS]?: z.output<(typeof OPENAI_OPTIONS)[K]["schema"]> };

/**
 * OpenAI's reasoning models (o1, o3, o4-mini..., gpt-5...) refuse
 * `max_tokens` and want `max_completion_tokens`. Matched on the model id as
 * OpenAI names it: behind a router (`openai/o3`) the router's own field applies.
 */
const COMPLETION_TOKENS_MODELS = /^(o\d|gpt-5)/i;

/**
 * OpenAI's reasoning models (the same families, but their `-chat` models)
 * refuse a temperature other than the default: none is sent to them, neither
 * agents.defaults.temperature, the entry's own, nor a client's.
 */
export function isReasoningModel(model: string): boolean {
  return COMPLETION_TOKENS_MODELS.test(model) && !/-chat/i.test(model);
}

/** One start-up line for each openai entry on a reasoning model that a temperature would otherwise go to, naming the setting. */
export function temperatureWarnings(config: { model_list: readonly ModelEntry[]; agents: { defaults: { temperature?: number | undefined } } }): string[] {
  const warnings: string[] = [];
  config.model_list.forEach((entry, index) => {
    if (entry.provider !== "openai" || !isReasoningModel(entry.model)) return;
    const setting =
      entry.temperature !== undefined
        ? `model_list[${index}].temperature`
        : config.agents.defaults.temperature !== undefined
          ? "agents.defaults.temperature"
          : undefined;
    if (setting)
      warnings.push(
        `${setting} is not sent to model_list[${index}] ("${entry.model_name}"): model "${entry.model}" is an OpenAI reasoning model, which refuses a temperature`,
      );
  });
  return warnings;
}

/** The field an entry's max_tokens is sent as: its `max_tokens_field`, else the known-models rule. */
export function maxTokensField(entry: Pick<OpenAIEntry, "model" | "max_tokens_field">): "max_tokens" | "max_completion_tokens" {
  return entry.max_tokens_field ?? (COMPLETION_TOKENS_MODELS.test(entry.model) ? "max_completion_tokens" : "max_tokens");
}

/**
 * Any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
 * llama.cpp, LM Studio, OpenRouter...): `POST {api_base}/chat/completions`,
 * streamed unless the entry says `"stream": false`. Both modes are read by
 * the same code into the same response.
 */
export class OpenAIProvider extends HttpModelProvider<OpenAIEntry> {
  constructor(entry: OpenAIEntry, opts: TransportOptions = {}) {
    super(entry, opts, {
      defaultBase: OPENAI_DEFAULT_BASE,
      path: "/chat/completions",
      headers: entry.api_key ? { authorization: `Bearer ${entry.api_key}` } : {},
    });
  }

  async warm(): Promise<void> {
    await (decoder ??= import("./openai-decode.js"));
  }

  override async chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    try {
      return await super.chat(request, onDelta);
    } catch (error) {
      throw withHint(error);
    }
  }

  /** The request exactly as it goes on the wire (OpenAI chat completions). */
  wire(request: ModelRequest): WireRequest {
    const body: Record<string, unknown> = {
      model: this.entry.model,
      messages: request.memo
        ? request.memo.messagesJson(this, request.messages, (message) => toWire(message, this.vision))
        : request.messages.map((message) => toWire(message, this.vision)),
    };
    if (request.tools.length > 0) body.tools = jsonTextFor(WIRE_TOOLS, request.tools, wireTools);
    if (this.entry.max_tokens !== undefined) body[maxTokensField(this.entry)] = this.entry.max_tokens;
    const takesTemperature = !isReasoningModel(this.entry.model);
    if (this.entry.temperature !== undefined && takesTemperature) body.temperature = this.entry.temperature;
    if (this.entry.reasoning_effort !== undefined) body.reasoning_effort = this.entry.reasoning_effort;
    const sampling = request.sampling;
    if (sampling) {
      if (sampling.temperature !== undefined && takesTemperature) body.temperature = sampling.temperature;
      if (sampling.topP !== undefined) body.top_p = sampling.topP;
      if (sampling.maxTokens !== undefined) body[maxTokensField(this.entry)] = sampling.maxTokens;
      if (sampling.stop !== undefined) body.stop = sampling.stop;
      if (sampling.seed !== undefined) body.seed = sampling.seed;
      if (sampling.responseFormat?.type === "json_object") body.response_format = { type: "json_object" };
      else if (sampling.responseFormat?.type === "json_schema") {
        const { name, schema, strict } = sampling.responseFormat;
        body.response_format = { type: "json_schema", json_schema: { name, schema, ...(strict === undefined ? {} : { strict }) } };
      }
      if (sampling.parallelToolCalls !== undefined && request.tools.length > 0) body.parallel_tool_calls = sampling.parallelToolCalls;
      const choice = sampling.toolChoice;
      if (choice !== undefined && request.tools.length > 0)
        body.tool_choice = typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
    }
    if (this.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return {
      url: this.url,
      headers: this.headers,
      body: mergeExtraBody(body, this.entry.extra_body),
      read: readChatCompletion,
    };
  }
}

/** Each tool set's tools as they go on the wire, made once per set (its specs array is made once: ToolSet.specs). */
const WIRE_TOOLS = new WeakMap<readonly ToolSpec[], JsonText>();

const wireTools = (tools: readonly ToolSpec[]) =>
  tools.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));

/**
 * Our messages in the exact wire shape (internal-only fields such as
 * `is_error` dropped). An answer's reasoning goes back in the field it came
 * in (servers such as DeepSeek require it with tool calls, within the turn).
 */
export function toWire(message: ChatMessage, vision = true): Record<string, unknown> {
  switch (message.role) {
    case "assistant": {
      const reasoning = message.thinking?.format === "openai" ? { [message.thinking.field]: message.thinking.text } : {};
      return message.tool_calls?.length
        ? { role: "assistant", content: message.content, ...reasoning, tool_calls: message.tool_calls }
        : { role: "assistant", content: message.content ?? "", ...reasoning };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    case "user":
      return { role: "user", content: visibleContent(message.content, vision) };
    default:
      return { role: message.role, content: message.content };
  }
}

/** A server that refuses max_tokens (or max_completion_tokens) gets an error that says which entry option fixes it. */
function withHint(error: unknown): unknown {
  if (!(error instanceof ModelError) || error.errorClass !== "bad_request") return error;
  const detail = detailOf(error);
  let wanted: string | undefined;
  if (/\bmax_tokens'? is not supported|use '?max_completion_tokens'? instead/i.test(detail)) wanted = "max_completion_tokens";
  else if (
    /(unrecognized|unsupported|unknown|not supported|not permitted|extra).*max_completion_tokens|max_completion_tokens'? is not supported/i.test(detail)
  ) {
    wanted = "max_tokens";
  }
  return wanted ? restate(error, `${detail} (set "max_tokens_field": "${wanted}" on this model entry)`) : error;
}
