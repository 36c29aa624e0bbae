import type { ChatMessage, ToolSpec } from "./message.js";

/**
 * Our OpenAI-shaped conversation in the Anthropic Messages shape: system
 * prompts go to the top-level `system`; tool calls become `tool_use` blocks;
 * tool results become `tool_result` blocks in a user message (with
 * `is_error` for failed tools); consecutive messages of one role are folded
 * into one, so roles alternate as the API requires.
 */

export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: true };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicConversation {
  system?: string;
  messages: AnthropicMessage[];
}

export function toAnthropic(messages: readonly ChatMessage[]): AnthropicConversation {
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
        add("user", textBlocks(message.content));
        break;
      case "assistant":
        add("assistant", [
          ...textBlocks(message.content ?? ""),
          ...(message.tool_calls ?? []).map(
            (call): AnthropicBlock => ({ type: "tool_use", id: call.id, name: call.function.name, input: inputOf(call.function.arguments) }),
          ),
        ]);
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

  return {
    ...(system.length ? { system: system.join("\n\n") } : {}),
    messages: turns.map(({ role, blocks }) => ({
      role,
      content: blocks.length === 1 && blocks[0]!.type === "text" ? blocks[0]!.text : blocks,
    })),
  };
}

/** Tools as the Messages API describes them. */
export function toAnthropicTools(tools: readonly ToolSpec[]): Record<string, unknown>[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: "object", ...tool.parameters },
  }));
}

/** The API refuses empty and whitespace-only text blocks. */
function textBlocks(text: string): AnthropicBlock[] {
  return text.trim() ? [{ type: "text", text }] : [];
}

/** A tool_use `input` must be an object; arguments that never parsed are sent as an empty one. */
function inputOf(args: string): unknown {
  try {
    const value: unknown = JSON.parse(args);
    if (value && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // the tool already answered with an error result for these arguments
  }
  return {};
}
