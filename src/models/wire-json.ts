import type { z } from "zod";
import { ModelError } from "../errors.js";
import { describeIssues, parseReporting } from "../validation.js";
import { readText } from "./body.js";
import { scrub } from "./http-errors.js";
import { formatBytes } from "../bytes.js";
import { ANSWER_LIMITS } from "./limits.js";
import type { ModelAnswer, ReadContext } from "./transport.js";

/**
 * The boundary where provider JSON enters: text that is not JSON, or JSON of
 * the wrong shape, becomes a `bad_response` ModelError that says what was
 * expected and shows (scrubbed, shortened) what came instead.
 */

export function parseJsonText(modelName: string, text: string, what: string, secrets: readonly (string | undefined)[]): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const shown = scrub(text, secrets, 120);
    throw new ModelError("bad_response", modelName, `${what} is not JSON: ${shown ? JSON.stringify(shown) : "(empty)"}; is api_base the right server?`);
  }
}

export function parseWire<S extends z.ZodType>(schema: S, value: unknown, modelName: string, what: string): z.output<S> {
  const parsed = parseReporting(schema, value);
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error).slice(0, 3).join("; ");
  throw new ModelError("bad_response", modelName, `${what} is not in the expected format: ${problems}`);
}

/** A whole (non-streamed) answer's body as text; one over ANSWER_LIMITS.bodyBytes is a bad_response. */
export async function readWhole(response: ModelAnswer, ctx: ReadContext): Promise<string> {
  const { text, complete } = await readText(response.body, ctx.activity, ANSWER_LIMITS.bodyBytes);
  if (!complete) {
    throw new ModelError(
      "bad_response",
      ctx.modelName,
      `the answer is over ${formatBytes(ANSWER_LIMITS.bodyBytes)}, more than an answer may hold; nothing of it was kept`,
    );
  }
  return text;
}

/** The bound of a streamed answer: what it may send without completing an event. */
export function streamLimit(modelName: string): { maxPendingBytes: number; tooLarge: () => Error } {
  return {
    maxPendingBytes: ANSWER_LIMITS.bodyBytes,
    tooLarge: () =>
      new ModelError(
        "bad_response",
        modelName,
        `the stream sent over ${formatBytes(ANSWER_LIMITS.bodyBytes)} without completing an event; nothing of the answer was kept`,
      ),
  };
}
