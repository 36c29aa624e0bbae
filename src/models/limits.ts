/**
 * What one model answer may hold at most (README, "Security and limits").
 * A server that sends more (a runaway stream, a hostile or broken server)
 * fails the call with `model_bad_response`, and nothing of its answer is
 * kept; an error answer's body is read only up to `errorBodyBytes`.
 */
export const ANSWER_LIMITS = {
  /** The answer's text, in UTF-8 bytes. */
  textBytes: 1024 * 1024,
  /** The reasoning the model exposed, in UTF-8 bytes. */
  reasoningBytes: 1024 * 1024,
  /** The arguments of all the answer's tool calls together, in UTF-8 bytes. */
  toolArgumentBytes: 1024 * 1024,
  /** Tool calls in one answer. */
  toolCalls: 128,
  /** A whole (non-streamed) answer's body, and what a stream may send without completing an event. */
  bodyBytes: 8 * 1024 * 1024,
  /** The part of an error answer's body that is read (its message is shortened anyway). */
  errorBodyBytes: 4 * 1024,
} as const;
