import type { ModelEntry } from "../config/schema.js";
import { readMessage } from "./anthropic-decode.js";
import { toAnthropic, toAnthropicTools } from "./anthropic-messages.js";
import type { ModelDelta, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  ModelTransport,
  type TransportOptions,
  type WireRequest,
  buildHeaders,
  mergeExtraBody,
  secretsOf,
} from "./transport.js";

export const ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com/v1";
export const ANTHROPIC_VERSION = "2023-06-01";
/** The API requires max_tokens; this fits every current Claude model. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/**
 * The Anthropic Messages API: `POST {api_base}/messages` with `x-api-key`
 * and `anthropic-version`, streamed unless the entry says `"stream": false`.
 */
export class AnthropicProvider implements ModelProvider {
  readonly name: string;
  private readonly url: string;
  private readonly transport: ModelTransport;

  constructor(
    private readonly entry: ModelEntry,
    opts: TransportOptions = {},
  ) {
    this.name = entry.model_name;
    this.url = `${(entry.api_base ?? ANTHROPIC_DEFAULT_BASE).replace(/\/+$/, "")}/messages`;
    this.transport = new ModelTransport(this.name, entry.request_timeout ?? DEFAULT_REQUEST_TIMEOUT_MS, secretsOf(entry), opts);
  }

  chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    return this.transport.send(this.wire(request), request.signal, onDelta);
  }

  /** The request exactly as it goes on the wire. */
  wire(request: ModelRequest): WireRequest {
    const stream = this.entry.stream !== false;
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: stream ? "text/event-stream" : "application/json",
      "anthropic-version": ANTHROPIC_VERSION,
    };
    if (this.entry.api_key) headers["x-api-key"] = this.entry.api_key;

    const { system, messages } = toAnthropic(request.messages);
    const body: Record<string, unknown> = {
      model: this.entry.model,
      max_tokens: this.entry.max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      ...(system === undefined ? {} : { system }),
      messages,
    };
    if (request.tools.length > 0) body.tools = toAnthropicTools(request.tools);
    if (this.entry.temperature !== undefined) body.temperature = this.entry.temperature;
    if (stream) body.stream = true;
    return {
      url: this.url,
      headers: buildHeaders(headers, this.entry.custom_headers),
      body: mergeExtraBody(body, this.entry.extra_body),
      read: readMessage,
    };
  }
}
