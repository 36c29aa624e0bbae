import type { ProviderAdapter } from "./adapter.js";
import { ANTHROPIC_DEFAULT_BASE, ANTHROPIC_OPTIONS, AnthropicProvider, type AnthropicEntry, anthropicProblems } from "./anthropic.js";
import { BuiltinModel } from "./builtin.js";
import { OPENAI_DEFAULT_BASE, OPENAI_OPTIONS, type OpenAIEntry, OpenAIProvider, isReasoningModel } from "./openai.js";

/**
 * The providers the gateway ships, as they register (adapter.ts). A new
 * wire format is an adapter file of models/ and one line in BUILTIN_PROVIDERS.
 */

/** The embedded offline model. */
export const builtinProvider: ProviderAdapter = {
  type: "builtin",
  check: (entry) => (entry.vision === true ? ['vision: the built-in model reads text only; leave vision out for provider "builtin"'] : []),
  create: (entry) => new BuiltinModel(entry.model_name),
};

/** Any OpenAI-compatible chat-completions server; the vendors PicoClaw names that speak it, with their default bases. */
export const openaiProvider: ProviderAdapter = {
  type: "openai",
  options: OPENAI_OPTIONS,
  vendors: {
    openai: OPENAI_DEFAULT_BASE,
    ollama: "http://localhost:11434/v1",
    vllm: "http://localhost:8000/v1",
    lmstudio: "http://localhost:1234/v1",
    litellm: "http://localhost:4000/v1",
    openrouter: "https://openrouter.ai/api/v1",
    deepseek: "https://api.deepseek.com/v1",
    groq: "https://api.groq.com/openai/v1",
    // Google's OpenAI-compatible endpoint (PicoClaw speaks Gemini's own API).
    gemini: "https://generativelanguage.googleapis.com/v1beta/openai",
    mistral: "https://api.mistral.ai/v1",
    nvidia: "https://integrate.api.nvidia.com/v1",
    cerebras: "https://api.cerebras.ai/v1",
    moonshot: "https://api.moonshot.cn/v1",
    zhipu: "https://open.bigmodel.cn/api/paas/v4",
    "qwen-portal": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "qwen-intl": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    "qwen-us": "https://dashscope-us.aliyuncs.com/compatible-mode/v1",
    volcengine: "https://ark.cn-beijing.volces.com/api/v3",
    venice: "https://api.venice.ai/api/v1",
    siliconflow: "https://api.siliconflow.cn/v1",
    minimax: "https://api.minimaxi.com/v1",
    longcat: "https://api.longcat.chat/openai",
    modelscope: "https://api-inference.modelscope.cn/v1",
    novita: "https://api.novita.ai/openai",
    xai: "https://api.x.ai/v1",
    together: "https://api.together.xyz/v1",
  },
  // A reasoning model refuses a temperature: agents.defaults.temperature is not given to it (nor sent: see isReasoningModel).
  takesTemperature: (entry) => !isReasoningModel(entry.model),
  create: (entry, opts) => new OpenAIProvider(entry as OpenAIEntry, opts),
};

/** The Anthropic Messages API. */
export const anthropicProvider: ProviderAdapter = {
  type: "anthropic",
  options: ANTHROPIC_OPTIONS,
  vendors: { anthropic: ANTHROPIC_DEFAULT_BASE, "anthropic-messages": ANTHROPIC_DEFAULT_BASE },
  // PicoClaw writes Anthropic's base without /v1; requests go to {api_base}/messages here.
  fromPicoclawBase: (apiBase) => (/^https?:\/\/[^/]+\/?$/.test(apiBase) ? `${apiBase.replace(/\/$/, "")}/v1` : apiBase),
  check: (entry) => anthropicProblems(entry as AnthropicEntry),
  // The Messages API refuses a temperature with thinking on.
  takesTemperature: (entry) => !(entry as AnthropicEntry).thinking,
  create: (entry, opts) => new AnthropicProvider(entry as AnthropicEntry, opts),
};

export const BUILTIN_PROVIDERS: readonly ProviderAdapter[] = [builtinProvider, openaiProvider, anthropicProvider];
