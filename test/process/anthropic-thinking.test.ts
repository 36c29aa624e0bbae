import { describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import type { ChatMessage, ThinkingBlock } from "../../src/models/message.js";
import {
  anthropicMessage,
  anthropicSse,
  checkingThinking,
  messageEnd,
  messageStart,
  redactedData,
  redactedThinkingBlock,
  signatureOf,
  textBlock,
  thinkingBlock,
  toolUseBlock,
} from "../support/fake-anthropic.js";
import { ask, deltaLog, fakeServer, modelEntry, modelFailure, weatherTool } from "../support/models.js";
import { harness, jsonOf } from "../support/project.js";
import { echoTool } from "../support/tools.js";

const thinkingEntry = (url: string, extra = {}) => modelEntry("anthropic", url, { max_tokens: 8000, thinking: { budget_tokens: 2000 }, ...extra });

/** A conversation whose assistant answer (a tool call) came with thinking, as the turn keeps it. */
function thoughtRound(blocks: ThinkingBlock[] = [{ type: "thinking", thinking: "Oslo first.", signature: signatureOf("Oslo first.") }]): ChatMessage[] {
  return [
    { role: "user", content: "Weather in Oslo?" },
    {
      role: "assistant",
      content: "Checking.",
      tool_calls: [{ id: "toolu_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }],
      thinking: { format: "anthropic", blocks: [...blocks, { type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1" }] },
    },
    { role: "tool", tool_call_id: "toolu_1", content: "4°C" },
  ];
}

describe("anthropic extended thinking: the request", () => {
  it("asks for thinking with the entry's budget", async () => {
    const server = await fakeServer(() => ({ chunks: anthropicSse([messageStart(), ...textBlock(0, "ok"), ...messageEnd("end_turn")]) }));
    await new AnthropicProvider(thinkingEntry(server.url)).chat(ask());
    expect(server.requests[0]!.body).toEqual({
      model: "claude-fake",
      max_tokens: 8000,
      messages: [{ role: "user", content: "hi" }],
      thinking: { type: "enabled", budget_tokens: 2000 },
      stream: true,
    });
  });

  it("sends an answer's thinking back exactly as received, in its place before the text and the tool call", async () => {
    const server = await fakeServer(checkingThinking({ chunks: anthropicSse([messageStart(), ...textBlock(0, "4°C."), ...messageEnd("end_turn")]) }));
    const blocks: ThinkingBlock[] = [
      { type: "thinking", thinking: "Oslo first.", signature: signatureOf("Oslo first.") },
      { type: "redacted_thinking", data: redactedData("hidden") },
    ];
    const response = await new AnthropicProvider(thinkingEntry(server.url)).chat(ask(thoughtRound(blocks), [weatherTool]));
    expect(response.text).toBe("4°C.");
    expect(server.requests[0]!.body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Oslo first.", signature: signatureOf("Oslo first.") },
        { type: "redacted_thinking", data: redactedData("hidden") },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Oslo" } },
      ],
    });
  });

  it("the fake refuses a thinking block whose signature was altered, as the API does", async () => {
    const server = await fakeServer(checkingThinking());
    const altered: ThinkingBlock[] = [{ type: "thinking", thinking: "Oslo first!", signature: signatureOf("Oslo first.") }];
    const error = await modelFailure(new AnthropicProvider(thinkingEntry(server.url)).chat(ask(thoughtRound(altered))));
    expect(error.code).toBe("model_bad_request");
    expect(error.message).toBe('model "claude": HTTP 400: messages.1.content.0: Invalid `signature` in `thinking` block');
  });

  it("the fake refuses a tool round whose answer lost its thinking, as the API does", async () => {
    const server = await fakeServer(checkingThinking());
    const lost = thoughtRound().map((m) => (m.role === "assistant" ? { ...m, thinking: undefined } : m));
    const error = await modelFailure(new AnthropicProvider(thinkingEntry(server.url)).chat(ask(lost)));
    expect(error.message).toContain("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`.");
  });
});

describe("anthropic extended thinking: the answer", () => {
  it("assembles streamed thinking_delta and signature_delta pieces, and keeps every block in the order received", async () => {
    const server = await fakeServer(() => ({
      chunks: anthropicSse([
        messageStart(),
        ...thinkingBlock(0, "The user wants ", "Oslo."),
        ...redactedThinkingBlock(1, "secret"),
        ...textBlock(2, "Checking."),
        ...toolUseBlock(3, "toolu_7", "weather", '{"city":"Oslo"}'),
        ...messageEnd("tool_use"),
      ]),
    }));
    const { deltas, onDelta } = deltaLog();
    const response = await new AnthropicProvider(thinkingEntry(server.url)).chat(ask(), onDelta);
    expect(response.reasoning).toBe("The user wants Oslo.");
    expect(response.text).toBe("Checking.");
    expect(response.thinking).toEqual({
      format: "anthropic",
      blocks: [
        { type: "thinking", thinking: "The user wants Oslo.", signature: signatureOf("The user wants Oslo.") },
        { type: "redacted_thinking", data: redactedData("secret") },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "toolu_7" },
      ],
    });
    // Thinking reaches listeners as reasoning, never as text; signatures and redacted data not at all.
    expect(deltas.filter((d) => d.type !== "tool_call")).toEqual([
      { type: "reasoning", text: "The user wants " },
      { type: "reasoning", text: "Oslo." },
      { type: "text", text: "Checking." },
    ]);
  });

  it("reads the thinking blocks of a whole answer the same way", async () => {
    const server = await fakeServer(() =>
      anthropicMessage(
        [
          { type: "thinking", thinking: "Short.", signature: signatureOf("Short.") },
          { type: "text", text: "Yes." },
        ],
        "end_turn",
      ),
    );
    const response = await new AnthropicProvider(thinkingEntry(server.url, { stream: false })).chat(ask());
    expect(response.thinking).toEqual({
      format: "anthropic",
      blocks: [
        { type: "thinking", thinking: "Short.", signature: signatureOf("Short.") },
        { type: "text", text: "Yes." },
      ],
    });
  });

  it("keeps nothing for an answer without thinking", async () => {
    const server = await fakeServer(() => ({ chunks: anthropicSse([messageStart(), ...textBlock(0, "plain"), ...messageEnd("end_turn")]) }));
    expect(await new AnthropicProvider(thinkingEntry(server.url)).chat(ask())).not.toHaveProperty("thinking");
  });

  it("counts signatures and redacted data toward the answer's reasoning limit", async () => {
    const server = await fakeServer(() => ({
      chunks: anthropicSse([messageStart(), ...redactedThinkingBlock(0, "x".repeat(800 * 1024)), ...textBlock(1, "hi"), ...messageEnd("end_turn")]),
    }));
    const error = await modelFailure(new AnthropicProvider(thinkingEntry(server.url)).chat(ask()));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toContain("the answer's reasoning is over 1 MiB");
  });
});

describe("anthropic extended thinking through a turn", () => {
  const config = (url: string) => ({
    agents: { defaults: { model_name: "claude" } },
    model_list: [
      {
        model_name: "claude",
        provider: "anthropic",
        model: "claude-fake",
        api_base: url,
        api_key: "sk-ant-test-999",
        max_tokens: 8000,
        thinking: { budget_tokens: 2000 },
      },
    ],
  });

  it("sends the signed blocks back with the tool results, shows none of them, and keeps none in the history", async () => {
    const server = await fakeServer(
      checkingThinking(
        {
          chunks: anthropicSse([
            messageStart(),
            ...thinkingBlock(0, "Echo it, then ", "say done."),
            ...textBlock(1, "On it."),
            ...toolUseBlock(2, "toolu_e", "echo", '{"text":"hi"}'),
            ...messageEnd("tool_use"),
          ]),
        },
        { chunks: anthropicSse([messageStart(), ...thinkingBlock(0, "It echoed."), ...textBlock(1, "Done."), ...messageEnd("end_turn")]) },
        { chunks: anthropicSse([messageStart(), ...thinkingBlock(0, "Again?"), ...textBlock(1, "Sure."), ...messageEnd("end_turn")]) },
      ),
    );
    const h = harness({ config: config(server.url), tools: [echoTool] });

    const res = await h.chat({ message: "echo hi" });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe("Done.");
    expect(res.json.delivered).toEqual([
      { from: "echo", text: "echo: hi" },
      { from: "agent", text: "Done." },
    ]);
    expect(server.requests[1]!.body.messages).toEqual([
      { role: "user", content: "echo hi" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Echo it, then say done.", signature: signatureOf("Echo it, then say done.") },
          { type: "text", text: "On it." },
          { type: "tool_use", id: "toolu_e", name: "echo", input: { text: "hi" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_e", content: "echo: hi" }] },
    ]);

    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:default/history"));
    expect(JSON.stringify(history)).not.toContain("thinking");
    expect(history.messages[1]).toEqual({
      role: "assistant",
      content: "On it.",
      tool_calls: [{ id: "toolu_e", type: "function", function: { name: "echo", arguments: '{"text":"hi"}' } }],
    });

    // The next turn sends the earlier answers without their thinking, which the API allows outside a tool round.
    const next = await h.chat({ message: "again" });
    expect(next.json.reply).toBe("Sure.");
    expect(JSON.stringify(server.requests[2]!.body.messages)).not.toContain('"thinking"');
  });
});
