import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { builtinConfigSchema } from "../../src/house.js";
import type { ChatMessage } from "../../src/models/message.js";
import type { ModelRequest, ModelResponse } from "../../src/models/provider.js";
import { ContextFitter } from "../../src/runtime/context/context-provider.js";
import { TokenGauge, boundTokens, estimateTokens, requestChars, sumMessages } from "../../src/runtime/context/context-window.js";
import type { HistoryStore } from "../../src/session/history.js";

/** The whole-request check's bound (context-window.ts) against the message-by-message estimate it stands in for. */

const message: fc.Arbitrary<ChatMessage> = fc.oneof(
  fc.record({ role: fc.constant("user" as const), content: fc.string({ maxLength: 200 }) }),
  fc.record({
    role: fc.constant("user" as const),
    content: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text" as const), text: fc.string({ maxLength: 50 }) }),
        fc.record({ type: fc.constant("image_url" as const), image_url: fc.record({ url: fc.constant("https://example.com/a.png") }) }),
      ),
      { maxLength: 4 },
    ),
  }),
  fc.record({ role: fc.constant("assistant" as const), content: fc.string({ maxLength: 200 }) }),
  fc.record({ role: fc.constant("tool" as const), tool_call_id: fc.string({ maxLength: 10 }), content: fc.string({ maxLength: 200 }) }),
) as fc.Arbitrary<ChatMessage>;

describe("the bound a request sent whole is judged by", () => {
  it("is never below the message-by-message estimate, and above it by less than a token a message", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), fc.double({ min: 1, max: 8, noNaN: true }), (messages, ratio) => {
        const bound = boundTokens(sumMessages(messages), ratio);
        const estimate = estimateTokens(messages, ratio);
        expect(bound).toBeGreaterThanOrEqual(estimate);
        expect(bound).toBeLessThanOrEqual(estimate + messages.length + 1);
      }),
    );
  });

  it("sums kept from a first part and extended with the rest are the sums of all", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), fc.nat(), (messages, at) => {
        const cut = messages.length === 0 ? 0 : at % (messages.length + 1);
        expect(sumMessages(messages, cut, sumMessages(messages.slice(0, cut)))).toEqual(sumMessages(messages));
      }),
    );
  });
});

describe("a request near the context window's budget", () => {
  const prompt: ChatMessage = { role: "system", content: "You help." };
  // Thirty exchanges of short texts: each message's characters round up to a whole token, so the bound is well above the estimate.
  const history: ChatMessage[] = Array.from({ length: 30 }, (_, i): ChatMessage[] => [
    { role: "user", content: `q${i}` },
    { role: "assistant", content: `a${i}` },
  ]).flat();
  const now: ChatMessage = { role: "user", content: "and now?" };
  const messages = [prompt, ...history, now];
  const estimate = estimateTokens(messages, 3);

  /** Tokens the model entry leaves for the answer (a window is at least 1,024). */
  const ANSWER = 1024;

  /** One turn's provider, fitted to a window of `window` tokens (ANSWER of them the answer's), and the requests it sent on. */
  function turn(window: number) {
    const config = builtinConfigSchema().parse({
      agents: { defaults: { model_name: "m" } },
      model_list: [{ model_name: "m", provider: "builtin", model: "x", context_window: window, max_tokens: ANSWER }],
    });
    const sent: (readonly ChatMessage[])[] = [];
    const inner = {
      name: "m",
      chat: async (request: ModelRequest): Promise<ModelResponse> => {
        sent.push(request.messages);
        return { content: "ok", toolCalls: [], modelName: "m" } as unknown as ModelResponse;
      },
    };
    const provider = new ContextFitter(config, {} as HistoryStore).forTurn(inner, "m", "agent:main:http:s");
    const call = (ms: readonly ChatMessage[]) => provider.chat({ messages: ms, tools: [], signal: new AbortController().signal });
    return { call, sent };
  }

  it("is sent whole when its estimate fits exactly, though the bound does not; one token less and its oldest exchange is left out", async () => {
    expect(boundTokens(sumMessages(messages), 3)).toBeGreaterThan(estimate);
    const fits = turn(estimate + ANSWER);
    await fits.call(messages);
    expect(fits.sent).toEqual([messages]);

    const over = turn(estimate + ANSWER - 1);
    await over.call(messages);
    expect(over.sent[0]).toEqual([prompt, ...history.slice(2), now]);
  });

  it("a turn's later call, its first call's messages and more, is judged on all of them: the sums kept and the new messages'", async () => {
    const round: ChatMessage[] = [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "r".repeat(300) },
    ];
    // Room for the first call whole, not for the second.
    const { call, sent } = turn(estimate + ANSWER + estimateTokens(round, 3) - 1);
    await call(messages);
    await call([...messages, ...round]);
    expect(sent[0]).toEqual(messages);
    expect(sent[1]!.length).toBeLessThan(messages.length + round.length);
    expect(sent[1]!.slice(-3)).toEqual([now, ...round]);
  });

  it("a call's reported usage is learnt from the characters it sent, taken from the kept sums when it went whole", async () => {
    const observe = vi.spyOn(TokenGauge.prototype, "observe");
    try {
      const config = builtinConfigSchema().parse({
        agents: { defaults: { model_name: "m" } },
        model_list: [{ model_name: "m", provider: "builtin", model: "x", context_window: 100_000, max_tokens: ANSWER }],
      });
      const tools = [{ name: "t", description: "A tool.", parameters: { type: "object", properties: {} } }];
      const inner = {
        name: "m",
        chat: async (): Promise<ModelResponse> =>
          ({ content: "ok", toolCalls: [], modelName: "m", usage: { inputTokens: 500, outputTokens: 1 } }) as unknown as ModelResponse,
      };
      const provider = new ContextFitter(config, {} as HistoryStore).forTurn(inner, "m", "agent:main:http:s");
      const round: ChatMessage[] = [
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "r".repeat(300) },
      ];
      const first = messages;
      const second = [...messages, ...round];
      await provider.chat({ messages: first, tools, signal: new AbortController().signal });
      await provider.chat({ messages: second, tools, signal: new AbortController().signal });
      expect(observe.mock.calls.map(([, chars, count]) => [chars, count])).toEqual([
        [requestChars(first, tools), first.length],
        [requestChars(second, tools), second.length],
      ]);
    } finally {
      observe.mockRestore();
    }
  });
});
