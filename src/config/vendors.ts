/**
 * Model vendors by the name PicoClaw gives them (`"model": "deepseek/deepseek-chat"`,
 * or `"provider": "deepseek"`): the wire format each speaks and its default
 * base URL when the entry gives no `api_base`. Vendors that speak OpenAI's
 * chat-completions format use the openai adapter. README's "Connecting a
 * model" lists the same table.
 */

export interface Vendor {
  /** Our provider (wire format). */
  provider: "openai" | "anthropic";
  /** Used when the entry gives no `api_base`. */
  apiBase: string;
}

const openai = (apiBase: string): Vendor => ({ provider: "openai", apiBase });
const anthropic = (apiBase: string): Vendor => ({ provider: "anthropic", apiBase });

export const VENDORS: Readonly<Record<string, Vendor>> = {
  openai: openai("https://api.openai.com/v1"),
  anthropic: anthropic("https://api.anthropic.com/v1"),
  "anthropic-messages": anthropic("https://api.anthropic.com/v1"),
  ollama: openai("http://localhost:11434/v1"),
  vllm: openai("http://localhost:8000/v1"),
  lmstudio: openai("http://localhost:1234/v1"),
  litellm: openai("http://localhost:4000/v1"),
  openrouter: openai("https://openrouter.ai/api/v1"),
  deepseek: openai("https://api.deepseek.com/v1"),
  groq: openai("https://api.groq.com/openai/v1"),
  // Google's OpenAI-compatible endpoint (PicoClaw speaks Gemini's own API).
  gemini: openai("https://generativelanguage.googleapis.com/v1beta/openai"),
  mistral: openai("https://api.mistral.ai/v1"),
  nvidia: openai("https://integrate.api.nvidia.com/v1"),
  cerebras: openai("https://api.cerebras.ai/v1"),
  moonshot: openai("https://api.moonshot.cn/v1"),
  zhipu: openai("https://open.bigmodel.cn/api/paas/v4"),
  "qwen-portal": openai("https://dashscope.aliyuncs.com/compatible-mode/v1"),
  "qwen-intl": openai("https://dashscope-intl.aliyuncs.com/compatible-mode/v1"),
  "qwen-us": openai("https://dashscope-us.aliyuncs.com/compatible-mode/v1"),
  volcengine: openai("https://ark.cn-beijing.volces.com/api/v3"),
  venice: openai("https://api.venice.ai/api/v1"),
  siliconflow: openai("https://api.siliconflow.cn/v1"),
  minimax: openai("https://api.minimaxi.com/v1"),
  longcat: openai("https://api.longcat.chat/openai"),
  modelscope: openai("https://api-inference.modelscope.cn/v1"),
  novita: openai("https://api.novita.ai/openai"),
  xai: openai("https://api.x.ai/v1"),
  together: openai("https://api.together.xyz/v1"),
};

/** PicoClaw vendors that need an account login or a protocol of their own, which PicoClaw-TS does not speak. */
export const UNSUPPORTED_VENDORS = ["azure", "bedrock", "antigravity", "github-copilot", "claude-cli", "codex-cli", "gpt4free", "elevenlabs"] as const;
