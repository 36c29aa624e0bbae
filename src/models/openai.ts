import type { ModelEntry } from "../config/schema.js";
import { ModelError } from "../errors.js";
import { httpError, retryAfterMs, scrub, transportError } from "./http-errors.js";
import type { ChatMessage, ToolCall } from "./message.js";
import type { ModelDelta, ModelProvider, ModelRequest, ModelResponse } from "./provider.js";

export const OPENAI_DEFAULT_BASE = "https://api.openai.com/v1";
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export type Fetch = typeof fetch;

/**
 * Any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM,
 * llama.cpp, LM Studio, OpenRouter...): `POST {api_base}/chat/completions`.
 */
export class OpenAIProvider implements ModelProvider {
  readonly name: string;
  private readonly url: string;
  private readonly timeoutMs: number;

  constructor(
    private readonly entry: ModelEntry,
    private readonly fetchImpl: Fetch = fetch,
  ) {
    this.name = entry.model_name;
    this.url = `${(entry.api_base ?? OPENAI_DEFAULT_BASE).replace(/\/+$/, "")}/chat/completions`;
    this.timeoutMs = entry.request_timeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  async chat(request: ModelRequest, onDelta?: (delta: ModelDelta) => void): Promise<ModelResponse> {
    request.signal.throwIfAborted();
    const secrets = [this.entry.api_key];
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    let status: number;
    let text: string;
    let retryAfter: number | undefined;
    try {
      const response = await this.fetchImpl(this.url, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify(this.body(request)),
        signal,
      });
      status = response.status;
      retryAfter = retryAfterMs(response.headers.get("retry-after"));
      text = await response.text();
    } catch (error) {
      throw transportError(this.name, error, request.signal, timeout, this.timeoutMs, secrets);
    }
    if (status < 200 || status >= 300) throw httpError(this.name, status, text, secrets, retryAfter);
    const result = this.parse(text, secrets);
    if (result.text) onDelta?.({ type: "text", text: result.text });
    result.toolCalls.forEach((call, index) =>
      onDelta?.({ type: "tool_call", index, id: call.id, name: call.function.name, arguments: call.function.arguments }),
    );
    return result;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.entry.api_key) headers.authorization = `Bearer ${this.entry.api_key}`;
    return { ...headers, ...this.entry.custom_headers };
  }

  private body(request: ModelRequest): Record<string, unknown> {
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
    return { ...body, ...this.entry.extra_body };
  }

  private parse(text: string, secrets: (string | undefined)[]): ModelResponse {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new ModelError("bad_response", this.name, `the answer is not JSON: ${scrub(text, secrets, 120)}`);
    }
    const choice = (data as { choices?: { message?: unknown; finish_reason?: unknown }[] })?.choices?.[0];
    const message = choice?.message as { content?: unknown; tool_calls?: unknown; reasoning_content?: unknown } | undefined;
    if (!message || typeof message !== "object") {
      throw new ModelError("bad_response", this.name, "the answer has no choices[0].message");
    }
    const toolCalls: ToolCall[] = [];
    if (Array.isArray(message.tool_calls)) {
      message.tool_calls.forEach((raw: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }, i) => {
        const name = raw?.function?.name;
        if (typeof name !== "string" || name === "") {
          throw new ModelError("bad_response", this.name, `tool_calls[${i}] has no function name`);
        }
        const args = raw.function?.arguments;
        toolCalls.push({
          id: typeof raw.id === "string" && raw.id ? raw.id : `call_${i}`,
          type: "function",
          function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) },
        });
      });
    }
    const usage = (data as { usage?: { prompt_tokens?: number; completion_tokens?: number } }).usage;
    return {
      text: typeof message.content === "string" ? message.content : null,
      toolCalls,
      ...(typeof message.reasoning_content === "string" ? { reasoning: message.reasoning_content } : {}),
      ...(usage ? { usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } } : {}),
      ...(typeof choice?.finish_reason === "string" ? { finishReason: choice.finish_reason } : {}),
      modelName: this.name,
    };
  }
}

/** Our messages in the exact wire shape (internal-only fields dropped). */
function toWire(message: ChatMessage): Record<string, unknown> {
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
