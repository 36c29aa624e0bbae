import type { Sampling } from "../../runtime/options.js";

/** What both OpenAI routes ask of an answer, in our words (each route reads its own field names into these). */
export interface AskedSampling {
  temperature?: number | null | undefined;
  topP?: number | null | undefined;
  maxTokens?: number | null | undefined;
  stop?: string | readonly string[] | null | undefined;
  seed?: number | null | undefined;
  parallelToolCalls?: boolean | null | undefined;
  toolChoice?: "none" | "auto" | "required" | { name: string } | null | undefined;
  format?:
    | {
        type: "text" | "json_object" | "json_schema";
        name?: string | undefined;
        schema?: Record<string, unknown> | undefined;
        strict?: boolean | null | undefined;
      }
    | null
    | undefined;
}

/** The sampling a request asks for, or undefined when it asks nothing. */
export function samplingFrom(asked: AskedSampling): Sampling | undefined {
  const sampling: Sampling = {};
  if (typeof asked.temperature === "number") sampling.temperature = asked.temperature;
  if (typeof asked.topP === "number") sampling.topP = asked.topP;
  if (typeof asked.maxTokens === "number") sampling.maxTokens = asked.maxTokens;
  if (typeof asked.stop === "string") sampling.stop = [asked.stop];
  else if (Array.isArray(asked.stop)) sampling.stop = asked.stop;
  if (typeof asked.seed === "number") sampling.seed = asked.seed;
  if (typeof asked.parallelToolCalls === "boolean") sampling.parallelToolCalls = asked.parallelToolCalls;
  if (asked.toolChoice) sampling.toolChoice = asked.toolChoice;
  const format = asked.format;
  if (format?.type === "json_object") sampling.responseFormat = { type: "json_object" };
  else if (format?.type === "json_schema") {
    sampling.responseFormat = {
      type: "json_schema",
      name: format.name ?? "response",
      schema: format.schema ?? {},
      ...(typeof format.strict === "boolean" ? { strict: format.strict } : {}),
    };
  }
  return Object.keys(sampling).length > 0 ? sampling : undefined;
}
