import { dataUrlParts, visibleContent } from "./content.js";
import type { ChatMessage, ContentPart, ThinkingBlock, ToolCall, ToolSpec } from "./message.js";

/**
 * Our OpenAI-shaped conversation in the Anthropic Messages shape: system
 * prompts go to the top-level `system`; tool calls become `tool_use` blocks;
 * tool results become `tool_result` blocks in a user message (with
 * `is_error` for failed tools); images become `image` blocks; an answer's
 * thinking goes back exactly as received, in its place among the answer's
 * blocks; consecutive messages of one role are folded into one, so roles
 * alternate as the API requires. With `cache`, prompt-cache breakpoints are
 * set (see `markCache`).
 */

export type CacheControl = { type: "ephemeral" };
type Cached = { cache_control?: CacheControl };

export type ImageSource = { type: "base64"; media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; data: string } | { type: "url"; url: string };

export type AnthropicBlock =
  | ({ type: "text"; text: string } & Cached)
  | ({ type: "image"; source: ImageSource } & Cached)
  | ({ type: "tool_use"; id: string; name: string; input: Record<string, unknown> } & Cached)
  | ({ type: "tool_result"; tool_use_id: string; content: string; is_error?: true } & Cached)
  | ThinkingBlock;

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export type SystemBlock = { type: "text"; text: string } & Cached;

export interface AnthropicConversation {
  system?: string | SystemBlock[];
  messages: AnthropicMessage[];
}

export interface ConversationOptions {
  /** False: images are sent as a note saying the model cannot see them. */
  vision?: boolean;
  /** Mark prompt-cache breakpoints on the system prompt and the conversation. */
  cache?: boolean;
}

const EPHEMERAL: CacheControl = { type: "ephemeral" };

export function toAnthropic(messages: readonly ChatMessage[], opts: ConversationOptions = {}): AnthropicConversation {
  const system: string[] = [];
  const turns: { role: "user" | "assistant"; blocks: AnthropicBlock[] }[] = [];
  const add = (role: "user" | "assistant", blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };

  for (const message of messages) {
    switch (message.role) {
      case "system":
        if (message.content.trim()) system.push(message.content);
        break;
      case "user":
        add("user", userBlocks(visibleContent(message.content, opts.vision !== false)));
        break;
      case "assistant":
        add("assistant", assistantBlocks(message));
        break;
      case "tool":
        add("user", [
          {
            type: "tool_result",
            tool_use_id: message.tool_call_id,
            content: message.content,
            ...(message.is_error ? { is_error: true as const } : {}),
          },
        ]);
        break;
    }
  }

  if (opts.cache) markCache(turns);
  const joined = system.join("\n\n");
  return {
    ...(system.length === 0 ? {} : { system: opts.cache ? [{ type: "text", text: joined, cache_control: EPHEMERAL }] : joined }),
    messages: turns.map(({ role, blocks }) => ({ role, content: asString(blocks) ?? blocks })),
  };
}

/**
 * Two breakpoints in the conversation (with the system prompt's and the tool
 * list's, four: the most the API takes): the end of the conversation, so the
 * next call (the next round of the turn, the next turn) reads it back, and the
 * end of what the previous call sent (the turn before the last answer), which
 * that call wrote. Thinking blocks cannot carry one; the block before does.
 */
function markCache(turns: { role: "user" | "assistant"; blocks: AnthropicBlock[] }[]): void {
  const lastAnswer = turns.findLastIndex((t) => t.role === "assistant");
  const marked = new Set([turns.length - 1, lastAnswer - 1].filter((i) => i >= 0));
  for (const i of marked) {
    const blocks = turns[i]!.blocks;
    const at = blocks.findLastIndex((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
    if (at >= 0) blocks[at] = { ...blocks[at]!, cache_control: EPHEMERAL } as AnthropicBlock;
  }
}

/** A lone text block without a breakpoint goes as a plain string, as the API's examples do. */
function asString(blocks: AnthropicBlock[]): string | undefined {
  const [only] = blocks;
  return blocks.length === 1 && only!.type === "text" && !only!.cache_control ? only!.text : undefined;
}

function userBlocks(content: string | ContentPart[]): AnthropicBlock[] {
  if (typeof content === "string") return textBlocks(content);
  return content.flatMap((part): AnthropicBlock[] =>
    part.type === "text" ? textBlocks(part.text) : [{ type: "image", source: imageSource(part.image_url.url) }],
  );
}

/** `data:` URLs go as base64 (the gateway lets only the four image types the API takes through), others by URL. */
function imageSource(url: string): ImageSource {
  const data = dataUrlParts(url);
  if (!data) return { type: "url", url };
  return { type: "base64", media_type: data.mediaType as Extract<ImageSource, { type: "base64" }>["media_type"], data: data.data };
}

/**
 * An answer's blocks: with thinking kept, exactly in the order received
 * (thinking whole, text whole, each tool_use from its call); otherwise its
 * text, then its tool calls.
 */
function assistantBlocks(message: ChatMessage & { role: "assistant" }): AnthropicBlock[] {
  const calls = message.tool_calls ?? [];
  if (message.thinking?.format !== "anthropic") return [...textBlocks(message.content ?? ""), ...calls.map(toolUse)];
  const used = new Set<string>();
  const blocks = message.thinking.blocks.flatMap((block): AnthropicBlock[] => {
    if (block.type === "text") return textBlocks(block.text);
    if (block.type !== "tool_use") return [block];
    const call = calls.find((c) => c.id === block.id);
    if (!call) return [];
    used.add(call.id);
    return [toolUse(call)];
  });
  return [...blocks, ...calls.filter((c) => !used.has(c.id)).map(toolUse)];
}

function toolUse(call: ToolCall): AnthropicBlock {
  return { type: "tool_use", id: call.id, name: call.function.name, input: inputOf(call.function.arguments) };
}

/** Tools as the Messages API describes them; with `cache`, the list ends with a breakpoint. */
export function toAnthropicTools(tools: readonly ToolSpec[], cache = false): Record<string, unknown>[] {
  return tools.map((tool, i) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...tool.parameters },
    ...(cache && i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
}

/** The API refuses empty and whitespace-only text blocks. */
function textBlocks(text: string): AnthropicBlock[] {
  return text.trim() ? [{ type: "text", text }] : [];
}

/** A tool_use `input` must be an object; arguments that never parsed are sent as an empty one. */
function inputOf(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // the tool already answered with an error result for these arguments
  }
  return {};
}
