import { z } from "zod";
import { checkInputSchema } from "./json-schema.js";

/** The part of a tool this needs (structural, so that the tool API can use it without an import cycle). */
interface SchemaTool {
  readonly name: string;
  readonly parameters: unknown;
  execute(args: never, ctx: never): unknown;
}

/** Arguments of a JSON-Schema tool reach `execute` as this (ajv has checked them). */
const ANY_OBJECT = z.record(z.string(), z.unknown());

/**
 * A tool whose `parameters` is a plain JSON Schema object, made into one the
 * tool set runs like any other: the model is shown the schema, and the
 * arguments are checked against it before `execute` runs (a bad call gets
 * an error result naming the field). Returns why not when the schema is not
 * a usable object schema. The prototype is kept (class-based tools).
 */
export function withJsonSchema<T extends SchemaTool>(tool: T): T | string {
  const checked = checkInputSchema(tool.parameters, "parameters");
  if (!checked.ok) return checked.problem.replace(/^its /, "");
  const execute = (args: unknown, ctx: unknown) => {
    const problems = checked.validate(args);
    if (problems.length > 0) return { forLLM: `invalid arguments for tool "${tool.name}": ${problems.join("; ")}`, silent: false, isError: true };
    return (tool.execute as (args: unknown, ctx: unknown) => unknown).call(tool, args, ctx);
  };
  return Object.create(tool, {
    parameters: { value: ANY_OBJECT },
    jsonSchema: { value: checked.schema },
    validatesOwnArguments: { value: true },
    execute: { value: execute },
  }) as T;
}
