import { z } from "zod";
import { configSchema } from "./schema.js";

/** The JSON Schema of the config file (what users write, defaults optional), for editors. */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    title: "PicoClaw-TS gateway config (picoclaw.config.json)",
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$schema")),
  };
}

export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
