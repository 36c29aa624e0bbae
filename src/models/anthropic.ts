import type { ModelEntry } from "../config/schema.js";
import type { ResponseAssembler } from "./assembler.js";
import { ANTHROPIC_DEFAULT_MAX_TOKENS } from "./entry-check.js";
import { toAnthropic, toAnthropicTools } from "./anthropic-messages.js";
import { HttpModelProvider } from "./http-provider.js";
import type { ModelRequest } from "./provider.js";
import { type ModelAnswer, type ReadContext, type TransportOptions, type WireRequest, mergeExtraBody } from "./transport.js";

/** The answer's reader (its wire schemas) is imported with the first answer: a gateway that never calls this provider never loads it. */
let decoder: Promise<typeof import("./anthropic-decode.js")> | undefined;
const readMessage = async (response: ModelAnswer, out: ResponseAssembler, ctx: ReadContext): Promise<void> =>
  (await (decoder ??= import("./anthropic-decode.js"))).readMessage(response, out, ctx);

export const ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com/v1";
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * The Anthropic Messages API: `POST {api_base}/messages` with `x-api-key`
 * and `anthropic-version`, streamed unless the entry says `"stream": false`.
 */
export class AnthropicProvider extends HttpModelProvider {
  constructor(entry: ModelEntry, opts: TransportOptions = {}) {
    super(entry, opts, {
      defaultBase: ANTHROPIC_DEFAULT_BASE,
      path: "/messages",
      headers: { "anthropic-version": ANTHROPIC_VERSION, ...(entry.api_key ? { "x-api-key": entry.api_key } : {}) },
    });
  }

  /** The request exactly as it goes on the wire. */
  wire(request: ModelRequest): WireRequest {
    const cache = this.entry.cache === true;
    const { system, messages } = toAnthropic(request.messages, { vision: this.vision, cache });
    const body: Record<string, unknown> = {
      model: this.entry.model,
      max_tokens: this.entry.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(system === undefined ? {} : { system }),
      messages,
    };
    if (request.tools.length > 0) body.tools = toAnthropicTools(request.tools, cache);
    if (this.entry.thinking) body.thinking = { type: "enabled", budget_tokens: this.entry.thinking.budget_tokens };
    if (this.entry.temperature !== undefined) body.temperature = this.entry.temperature;
    if (this.stream) body.stream = true;
    return {
      url: this.url,
      headers: this.headers,
      body: mergeExtraBody(body, this.entry.extra_body),
      read: readMessage,
    };
  }
}
