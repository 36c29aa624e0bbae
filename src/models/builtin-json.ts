/**
 * A JSON value that fits a JSON Schema, for the built-in model's answer to
 * a structured request (`response_format: json_schema`): so a client's
 * `generateObject` or `withStructuredOutput` can be tried offline. It is an
 * example, not an answer: strings say so, numbers are the least allowed.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

/**
 * The most values one example holds. Arrays repeat their items (up to 10 each), so nested arrays would multiply:
 * eight levels of `minItems: 10` are 10^8 values from a schema of a few hundred bytes. Past the budget an array
 * gets fewer items and a value is null: an example still, and one of bounded size.
 */
const MAX_VALUES = 1000;

export function exampleOf(schema: unknown): unknown {
  return exampleWithin(schema, 0, { left: MAX_VALUES });
}

function exampleWithin(schema: unknown, depth: number, budget: { left: number }): unknown {
  if (!schema || typeof schema !== "object" || depth > MAX_DEPTH || budget.left <= 0) return null;
  budget.left--;
  const s = schema as Schema;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return exampleWithin(options[0], depth + 1, budget);
  }
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== "null") ?? s.type[0]) : s.type;
  switch (type) {
    case "object": {
      const properties = (s.properties as Record<string, unknown> | undefined) ?? {};
      return Object.fromEntries(Object.entries(properties).map(([key, inner]) => [key, exampleWithin(inner, depth + 1, budget)]));
    }
    case "array": {
      const count = typeof s.minItems === "number" ? Math.min(s.minItems, 10) : 1;
      return Array.from({ length: Math.max(Math.min(count, budget.left), 1) }, () => exampleWithin(s.items, depth + 1, budget));
    }
    case "string": {
      if (s.format === "date-time") return "2026-01-01T00:00:00Z";
      if (s.format === "date") return "2026-01-01";
      const text = "example (the built-in model)";
      return typeof s.maxLength === "number" ? text.slice(0, s.maxLength) : text;
    }
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum + 1 : 0;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return s.properties ? exampleWithin({ ...s, type: "object" }, depth, budget) : null;
  }
}
