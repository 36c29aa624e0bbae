import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/errors.js";
import { ResponseAssembler } from "../../src/models/assembler.js";
import { ANSWER_LIMITS } from "../../src/models/limits.js";

/**
 * What one answer may hold, checked as its pieces arrive (streamed or
 * whole, both providers go through the assembler). The wire tests against
 * a hostile server are in hostile-model-servers.test.ts.
 */

const failure = (work: () => void): ModelError => {
  try {
    work();
  } catch (error) {
    if (error instanceof ModelError) return error;
    throw error;
  }
  throw new Error("expected a ModelError");
};

describe("an answer's bounds", () => {
  it("text and reasoning up to 1 MiB each are kept whole", () => {
    const out = new ResponseAssembler("m");
    out.text("é".repeat(ANSWER_LIMITS.textBytes / 2));
    out.reasoning("r".repeat(ANSWER_LIMITS.reasoningBytes));
    const response = out.result();
    expect(Buffer.byteLength(response.text!)).toBe(ANSWER_LIMITS.textBytes);
    expect(response.reasoning).toHaveLength(ANSWER_LIMITS.reasoningBytes);
  });

  it("one byte of text more is model_bad_response (UTF-8 bytes count, not characters)", () => {
    const out = new ResponseAssembler("m");
    out.text("é".repeat(ANSWER_LIMITS.textBytes / 2));
    const error = failure(() => out.text("!"));
    expect(error.code).toBe("model_bad_response");
    expect(error.message).toBe(
      'model "m": the answer\'s text is over 1 MiB, more than an answer may hold; nothing of it was kept (lower max_tokens, or check the server)',
    );
  });

  it("reasoning over 1 MiB is model_bad_response", () => {
    const out = new ResponseAssembler("m");
    expect(failure(() => out.reasoning("r".repeat(ANSWER_LIMITS.reasoningBytes + 1))).message).toContain("the answer's reasoning is over 1 MiB");
  });

  it("tool-call arguments over 1 MiB in all, in pieces or whole, are model_bad_response", () => {
    const pieces = new ResponseAssembler("m");
    pieces.toolCall({ index: 0, id: "a", name: "write", arguments: `{"text":"${"x".repeat(ANSWER_LIMITS.toolArgumentBytes / 2)}` });
    pieces.toolCall({ index: 1, id: "b", name: "write", arguments: `{"text":"${"x".repeat(ANSWER_LIMITS.toolArgumentBytes / 4)}` });
    expect(failure(() => pieces.toolCall({ index: 1, arguments: "x".repeat(ANSWER_LIMITS.toolArgumentBytes / 4) })).message).toContain(
      "the answer's tool-call arguments are over 1 MiB, more than an answer may hold",
    );
    const whole = new ResponseAssembler("m");
    expect(failure(() => whole.toolCall({ index: 0, name: "write", arguments: { text: "x".repeat(ANSWER_LIMITS.toolArgumentBytes) } })).code).toBe(
      "model_bad_response",
    );
  });

  it(`more than ${ANSWER_LIMITS.toolCalls} tool calls in one answer is model_bad_response`, () => {
    const out = new ResponseAssembler("m");
    for (let i = 0; i < ANSWER_LIMITS.toolCalls; i++) out.toolCall({ index: i, id: `c${i}`, name: "t", arguments: "{}" });
    expect(out.result().toolCalls).toHaveLength(ANSWER_LIMITS.toolCalls);
    expect(failure(() => out.toolCall({ index: ANSWER_LIMITS.toolCalls, id: "one-more", name: "t" })).message).toBe(
      `model "m": the answer has more than ${ANSWER_LIMITS.toolCalls} tool calls, more than an answer may hold; nothing of it was kept`,
    );
  });
});
