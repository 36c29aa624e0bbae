import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configJsonSchema, configJsonSchemaText } from "../../src/config/json-schema.js";
import { builtinHouse } from "../../src/house.js";

describe("config/picoclaw.schema.json", () => {
  it("is up to date with the zod schema (run `npm run schema` when this fails)", () => {
    const file = path.resolve(import.meta.dirname, "..", "..", "config", "picoclaw.schema.json");
    expect(readFileSync(file, "utf8")).toBe(configJsonSchemaText(builtinHouse().layout));
  });

  it("describes strict objects with defaults, so editors complete and flag keys", () => {
    // biome-ignore lint/suspicious/noExplicitAny: JSON Schema read by path
    const schema = configJsonSchema(builtinHouse().layout) as { additionalProperties: boolean; properties: Record<string, any> };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.gateway.properties.port).toMatchObject({ type: "integer", default: 18790, minimum: 0, maximum: 65535 });
    expect(schema.properties.tools.properties.todo.properties.enabled).toMatchObject({ type: "boolean", default: false });
    expect(schema.properties.model_list.items.properties.provider.enum).toEqual(["builtin", "openai", "anthropic"]);
  });
});
