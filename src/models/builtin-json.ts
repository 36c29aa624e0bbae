/**
 * A JSON value that fits a JSON Schema, for the built-in model's answer to
 * a structured request (`response_format: json_schema`): so a client's
 * `generateObject` or `withStructuredOutput` can be tried offline. It is an
 * example, not an answer: strings say so, numbers are the least allowed.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;

export function exampleOf(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > MAX_DEPTH) return null;
  const s = schema as Schema;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return exampleOf(options[0], depth + 1);
  }
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== "null") ?? s.type[0]) : s.type;
  switch (type) {
    case "object": {
      const properties = (s.properties as Record<string, unknown> | undefined) ?? {};
      return Object.fromEntries(Object.entries(properties).map(([key, inner]) => [key, exampleOf(inner, depth + 1)]));
    }
    case "array": {
      const count = typeof s.minItems === "number" ? Math.min(s.minItems, 10) : 1;
      return Array.from({ length: Math.max(count, 1) }, () => exampleOf(s.items, depth + 1));
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
      return s.properties ? exampleOf({ ...s, type: "object" }, depth) : null;
  }
}
