import type { z } from "zod";
import { ModelError } from "../errors.js";
import { describeIssues } from "../validation.js";
import { scrub } from "./http-errors.js";

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
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const problems = describeIssues(parsed.error).slice(0, 3).join("; ");
  throw new ModelError("bad_response", modelName, `${what} is not in the expected format: ${problems}`);
}
