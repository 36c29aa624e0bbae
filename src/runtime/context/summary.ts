import { type ChatMessage, textOf } from "../../models/message.js";
import type { ModelProvider } from "../../models/provider.js";

/**
 * Summarising the exchanges that no longer fit (agents.defaults.summarize):
 * the agent's own model reads them as a transcript and writes a short
 * summary, which takes their place in the session's history as one
 * exchange, so later turns keep the gist of what was said.
 */

/** The user message of a summary exchange (the assistant's answer is the summary). */
export const SUMMARY_MARK = "[A summary of the earlier part of this conversation, which no longer fits the model's context window.]";

const INSTRUCTIONS =
  "You summarise conversations for an assistant that will carry on with them. Write a short summary (at most 300 words) of the transcript you are given: " +
  "what the user wants, facts and decisions established, what tools did and found, and what is still open. Write only the summary.";

/** Characters of one message in the transcript, at most. */
const MESSAGE_CHARS = 4_000;

function line(message: ChatMessage): string {
  const cut = (text: string) => (text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)} [...]` : text);
  const pictures = Array.isArray(message.content) ? message.content.filter((part) => part.type !== "text").length : 0;
  const text = textOf(message.content) + (pictures > 0 ? ` [${pictures} image(s)]` : "");
  switch (message.role) {
    case "user":
      return `User: ${cut(text)}`;
    case "assistant": {
      const calls = (message.tool_calls ?? []).map((call) => `${call.function.name}(${cut(call.function.arguments)})`);
      return [text ? `Assistant: ${cut(text)}` : "", calls.length ? `Assistant called: ${calls.join(", ")}` : ""].filter(Boolean).join("\n");
    }
    case "tool":
      return `Tool result: ${cut(text)}`;
    case "system":
      return `Note: ${cut(text)}`;
  }
}

/** The exchanges as a transcript of at most `maxChars` characters (its middle left out when longer). */
export function transcriptOf(exchanges: readonly ChatMessage[][], maxChars: number): string {
  const text = exchanges.flat().map(line).filter(Boolean).join("\n\n");
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars / 4);
  const tail = maxChars - head;
  return `${text.slice(0, head)}\n\n[... ${text.length - maxChars} characters left out ...]\n\n${text.slice(-tail)}`;
}

/** The exchange that stands for `exchanges` in the history, written by `provider`. */
export async function summaryExchange(
  provider: ModelProvider,
  exchanges: readonly ChatMessage[][],
  maxChars: number,
  signal: AbortSignal,
): Promise<ChatMessage[]> {
  const response = await provider.chat({
    messages: [
      { role: "system", content: INSTRUCTIONS },
      { role: "user", content: transcriptOf(exchanges, maxChars) },
    ],
    tools: [],
    signal,
  });
  const summary = (response.text ?? "").trim();
  if (!summary) throw new Error("the model wrote an empty summary");
  return [
    { role: "user", content: SUMMARY_MARK },
    { role: "assistant", content: summary },
  ];
}
