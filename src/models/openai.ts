import type { ModelEntry } from "../config/schema.js";
import type { ChatMessage } from "./message.js";
import { readChatCompletion } from "./openai-decode.js";
import { HttpModelProvider } from "./http-provider.js";
import type { ModelRequest } from "./provider.js";
import { type TransportOptions, type WireRequest, buildHeaders, mergeExtraBody } from "./transport.js";

export const OPENAI_DEFAULT_BASE = "https://api.openai.com/v1";

/**
 * Any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
 * llama.cpp, LM Studio, OpenRouter...): `POST {api_base}/chat/completions`,
 * streamed unless the entry says `"stream": false`. Both modes are read by
 * the same code into the same response.
 */
export class OpenAIProvider extends HttpModelProvider {
  constructor(entry: ModelEntry, opts: TransportOptions = {}) {
    super(entry, opts, { defaultBase: OPENAI_DEFAULT_BASE, path: "/chat/completions" });
  }

  /** The request exactly as it goes on the wire (OpenAI chat completions). */
  wire(request: ModelRequest): WireRequest {
    const headers = this.baseHeaders();
    if (this.entry.api_key) headers.authorization = `Bearer ${this.entry.api_key}`;

    const body: Record<string, unknown> = {
      model: this.entry.model,
      messages: request.messages.map(toWire),
    };
    if (request.tools.length > 0) {
      body.tools = request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }));
    }
    if (this.entry.max_tokens !== undefined) body.max_tokens = this.entry.max_tokens;
    if (this.entry.temperature !== undefined) body.temperature = this.entry.temperature;
    if (this.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return {
      url: this.url,
      headers: buildHeaders(headers, this.entry.custom_headers),
      body: mergeExtraBody(body, this.entry.extra_body),
      read: readChatCompletion,
    };
  }
}

/** Our messages in the exact wire shape (internal-only fields such as `is_error` dropped). */
export function toWire(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "assistant":
      return message.tool_calls?.length
        ? { role: "assistant", content: message.content, tool_calls: message.tool_calls }
        : { role: "assistant", content: message.content ?? "" };
    case "tool":
      return { role: "tool", tool_call_id: message.tool_call_id, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}
