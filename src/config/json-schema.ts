import { z } from "zod";
import type { ConfigLayout } from "./layout.js";

/** The JSON Schema of the config file (what users write, defaults optional), for editors: the layout's whole schema. */
export function configJsonSchema(layout: ConfigLayout): Record<string, unknown> {
  const schema = z.toJSONSchema(layout.schema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    title: "PicoClaw-TS gateway config (picoclaw.config.json)",
    ...Object.fromEntries(Object.entries(schema).filter(([key]) => key !== "$schema")),
  };
}

export function configJsonSchemaText(layout: ConfigLayout): string {
  return `${JSON.stringify(configJsonSchema(layout), null, 2)}\n`;
}
