import { describe, expect, it } from "vitest";
import type { ChatMessage, ToolSpec } from "../../src/models/message.js";
import { TokenGauge, estimateTokens, fitRequest, splitRequest, toolTokens } from "../../src/runtime/context/context-window.js";

/** Fitting a request to a context window, on its own (the provider round trips are in context-window.test.ts). */

const exchange = (n: number, size = 300): ChatMessage[] => [
  { role: "user", content: `q${n} ${"u".repeat(size)}` },
  { role: "assistant", content: null, tool_calls: [{ id: `c${n}`, type: "function", function: { name: "t", arguments: "{}" } }] },
  { role: "tool", tool_call_id: `c${n}`, content: `r${n} ${"r".repeat(size)}` },
  { role: "assistant", content: `a${n}` },
];
const prompt: ChatMessage = { role: "system", content: "You help." };
const note: ChatMessage = { role: "system", content: "[The user changed the plan]" };
const now: ChatMessage = { role: "user", content: "and now?" };
const tools: ToolSpec[] = [{ name: "t", description: "A tool.", parameters: { type: "object", properties: {} } }];

describe("fitting a request to the context window", () => {
  it("splits a turn's request into the prompt, the earlier exchanges and this turn (its note included)", () => {
    const round: ChatMessage[] = [
      { role: "assistant", content: null, tool_calls: [{ id: "x", type: "function", function: { name: "t", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "x", content: "done" },
    ];
    const parts = splitRequest([prompt, ...exchange(1), ...exchange(2), note, now, ...round]);
    expect(parts.prefix).toEqual([prompt]);
    expect(parts.exchanges).toEqual([exchange(1), exchange(2)]);
    expect(parts.current).toEqual([note, now, ...round]);
  });

  it("keeps the prompt, the tools and this turn always, then the most recent whole exchanges that fit", () => {
    const parts = splitRequest([prompt, ...exchange(1), ...exchange(2), ...exchange(3), now]);
    const fixed = toolTokens(tools, 3) + estimateTokens([prompt, now], 3);
    const one = estimateTokens(exchange(3), 3);
    const fitted = fitRequest(parts, tools, fixed + 2 * one + 10, 3);
    expect(fitted.messages).toEqual([prompt, ...exchange(2), ...exchange(3), now]);
    expect(fitted.dropped).toEqual([exchange(1)]);
    expect(fitted.tokens).toBe(fixed + 2 * one);
    // Nothing fits but what must be sent.
    expect(fitRequest(parts, tools, 1, 3).messages).toEqual([prompt, now]);
    // Everything fits.
    expect(fitRequest(parts, tools, 1_000_000, 3).dropped).toEqual([]);
    // A retry keeps at most so many exchanges.
    expect(fitRequest(parts, tools, 1_000_000, 3, 1).messages).toEqual([prompt, ...exchange(3), now]);
  });

  it("a request that fits whole is sent as the very array it came in (no copy of the history); one that does not is a new array", () => {
    const whole = [prompt, ...exchange(1), ...exchange(2), now];
    const parts = splitRequest(whole);
    const all = fitRequest(parts, tools, 1_000_000, 3, Number.POSITIVE_INFINITY, whole);
    expect(all.messages).toBe(whole);
    expect(all.dropped).toEqual([]);
    expect(all.tokens).toBe(fitRequest(parts, tools, 1_000_000, 3).tokens);
    const cut = fitRequest(parts, tools, 1_000_000, 3, 1, whole);
    expect(cut.messages).not.toBe(whole);
    expect(cut.messages).toEqual([prompt, ...exchange(2), now]);
    expect(whole).toEqual([prompt, ...exchange(1), ...exchange(2), now]);
  });

  it("never keeps an older exchange once a newer one did not fit (the conversation stays contiguous)", () => {
    const parts = splitRequest([prompt, ...exchange(1, 10), ...exchange(2, 5000), ...exchange(3, 10), now]);
    const budget = estimateTokens([prompt, now], 3) + estimateTokens(exchange(3, 10), 3) + estimateTokens(exchange(1, 10), 3) + 5;
    expect(fitRequest(parts, [], budget, 3).messages).toEqual([prompt, ...exchange(3, 10), now]);
  });

  it("counts pictures and other parts that are not text by a fixed amount, and text by its characters", () => {
    const picture = {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${"A".repeat(100_000)}` } },
      ],
    };
    expect(estimateTokens([picture as unknown as ChatMessage], 4)).toBe(1 + 4 + 1000);
  });

  it("learns characters per token from the usage providers report, and ignores counts no text has", () => {
    const gauge = new TokenGauge();
    expect(gauge.charsPerToken("m")).toBe(3);
    gauge.observe("m", 4000, 10, 1040);
    expect(gauge.charsPerToken("m")).toBe(4);
    gauge.observe("m", 4000, 10, 50); // 400 characters a token: cached tokens left out, or a fake
    expect(gauge.charsPerToken("m")).toBe(4);
    gauge.observe("m", 2000, 10, 1040); // 2 a token: the average moves halfway
    expect(gauge.charsPerToken("m")).toBe(3);
    expect(gauge.charsPerToken("other")).toBe(3);
  });

  it("after an overflow, remembers a ceiling below what was sent, and the window the provider named", () => {
    const gauge = new TokenGauge();
    expect(gauge.ceiling("m")).toBeUndefined();
    gauge.overflowed("m", 10_000);
    expect(gauge.ceiling("m")).toBe(9_000);
    gauge.overflowed("m", 20_000, 4_000);
    expect(gauge.ceiling("m")).toBe(4_000);
    gauge.counted("m", 9_000, 0, 1_000);
    expect(gauge.charsPerToken("m")).toBe(6);
  });
});
