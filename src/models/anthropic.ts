import { z } from "zod";
import type { ModelEntry } from "../config/schema.js";
import type { ResponseAssembler } from "./assembler.js";
import { toAnthropic, toAnthropicTools } from "./anthropic-messages.js";
import { HttpModelProvider } from "./http-provider.js";
import { type JsonText, jsonTextFor } from "./json-text.js";
import type { ToolSpec } from "./message.js";
import type { ModelRequest } from "./provider.js";
import { type ModelAnswer, type ReadContext, type TransportOptions, type WireRequest, mergeExtraBody } from "./transport.js";

/** The answer's reader (its wire schemas) is imported with the first answer: a gateway that never calls this provider never loads it. */
let decoder: Promise<typeof import("./anthropic-decode.js")> | undefined;
const readMessage = async (response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> =>
  (await (decoder ??= import("./anthropic-decode.js"))).readMessage(response, out, ctx);

/** Each tool set's tools on the wire, made once per set (its specs array is made once: ToolSet.specs), with and without the cache mark. */
const WIRE_TOOLS = new WeakMap<readonly ToolSpec[], JsonText>();
const CACHED_TOOLS = new WeakMap<readonly ToolSpec[], JsonText>();

export const ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com/v1";
export const ANTHROPIC_VERSION = "2023-06-01";

/** The Messages API requires max_tokens; this fits every current Claude model (sent when the entry sets none). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** The entry keys only this provider takes (`otherwise`: what a provider that does not take one offers instead). */
export const ANTHROPIC_OPTIONS = {
  thinking: {
    schema: z
      .strictObject({
        budget_tokens: z.int().min(1024).max(10_000_000).describe("Tokens the model may think with; at least 1024 and less than max_tokens."),
      })
      .describe("anthropic: extended thinking; the signed thinking blocks go back with the rest of the turn, as the API requires with tools."),
    otherwise: "an OpenAI-compatible reasoning model takes reasoning_effort",
  },
  cache: {
    schema: z
      .boolean()
      .describe("anthropic: prompt caching; the tool list, the system prompt and the conversation so far are marked cacheable (default false)."),
    otherwise: "OpenAI-compatible servers cache prompts by themselves",
  },
} as const;

/** An entry of provider `anthropic`, with its own options. */
export type AnthropicEntry = ModelEntry & { [K in keyof typeof ANTHROPIC_OPTIONS]?: z.output<(typeof ANTHROPIC_OPTIONS)[K]["schema"]> };

/** What the Messages API refuses of an entry, before its first request. */
export function anthropicProblems(entry: AnthropicEntry): string[] {
  const problems: string[] = [];
  if (entry.temperature !== undefined && entry.temperature > 1) problems.push('temperature: must be <= 1 for provider "anthropic"');
  if (entry.thinking) {
    const maxTokens = entry.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
    if (entry.thinking.budget_tokens >= maxTokens) {
      problems.push(
        `thinking.budget_tokens: must be less than max_tokens (${maxTokens}${entry.max_tokens === undefined ? ", the default" : ""}); raise max_tokens, which counts the thinking too`,
      );
    }
    if (entry.temperature !== undefined && entry.temperature !== 1) {
      problems.push("temperature: the API takes no temperature but 1 with thinking on; leave temperature out");
    }
  }
  return problems;
}

/**
 * The Anthropic Messages API: `POST {api_base}/messages` with `x-api-key`
 * and `anthropic-version`, streamed unless the entry says `"stream": false`.
 */
export class AnthropicProvider extends HttpModelProvider<AnthropicEntry> {
  constructor(entry: AnthropicEntry, opts: TransportOptions = {}) {
    super(entry, opts, {
      defaultBase: ANTHROPIC_DEFAULT_BASE,
      path: "/messages",
      headers: { "anthropic-version": ANTHROPIC_VERSION, ...(entry.api_key ? { "x-api-key": entry.api_key } : {}) },
    });
  }

  /** The request exactly as it goes on the wire. */
  async warm(): Promise<void> {
    await (decoder ??= import("./anthropic-decode.js"));
  }

  wire(request: ModelRequest): WireRequest {
    const cache = this.entry.cache === true;
    const sampling = request.sampling;
    // Anthropic's Messages API has no response_format: the structure is asked for in the system prompt, last.
    const structured = sampling?.responseFormat
      ? [...request.messages, { role: "system" as const, content: structureNote(sampling.responseFormat) }]
      : request.messages;
    const { system, messages } = toAnthropic(structured, { vision: this.vision, cache });
    const body: Record<string, unknown> = {
      model: this.entry.model,
      max_tokens: this.entry.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(system === undefined ? {} : { system }),
      messages,
    };
    if (request.tools.length > 0) body.tools = jsonTextFor(cache ? CACHED_TOOLS : WIRE_TOOLS, request.tools, (tools) => toAnthropicTools(tools, cache));
    if (this.entry.thinking) body.thinking = { type: "enabled", budget_tokens: this.entry.thinking.budget_tokens };
    if (this.entry.temperature !== undefined) body.temperature = this.entry.temperature;
    if (sampling) {
      if (sampling.temperature !== undefined && !this.entry.thinking) body.temperature = sampling.temperature;
      if (sampling.topP !== undefined) body.top_p = sampling.topP;
      if (sampling.maxTokens !== undefined) body.max_tokens = sampling.maxTokens;
      if (sampling.stop !== undefined) body.stop_sequences = sampling.stop;
      const choice = sampling.toolChoice;
      if (request.tools.length > 0 && (choice !== undefined || sampling.parallelToolCalls === false)) {
        // Anthropic's words: auto, any (a call is required), tool (this one), none.
        const kind =
          choice === undefined || choice === "auto"
            ? { type: "auto" }
            : choice === "required"
              ? { type: "any" }
              : choice === "none"
                ? { type: "none" }
                : { type: "tool", name: choice.name };
        body.tool_choice = { ...kind, ...(sampling.parallelToolCalls === false && kind.type !== "none" ? { disable_parallel_tool_use: true } : {}) };
      }
    }
    if (this.stream) body.stream = true;
    return {
      url: this.url,
      headers: this.headers,
      body: mergeExtraBody(body, this.entry.extra_body),
      read: readMessage,
    };
  }
}

/** The instruction that asks an Anthropic model for a structured answer (its API takes no response_format). */
export function structureNote(format: NonNullable<ModelRequest["sampling"]>["responseFormat"] & object): string {
  if (format.type === "json_object") return "Answer with one JSON object and nothing else: no prose, no code fence.";
  return `Answer with one JSON value and nothing else (no prose, no code fence) that matches this JSON Schema, named "${format.name}":\n${JSON.stringify(format.schema)}`;
}
