// biome-ignore-all lint/suspicious/noExplicitAny: the routes' JSON, read as the tests check it
/**
 * A request's cost stays in proportion to its size: a small schema cannot make the built-in model's example
 * explode (nested arrays multiply their items), and a body nested thousands deep is a 400, not a 500 thrown by
 * JSON.stringify's recursion once the turn has run.
 */
import { describe, expect, it } from "vitest";
import { harness, jsonOf } from "../support/project.js";

const post = (h: ReturnType<typeof harness>, path: string, body: string) =>
  h.request(path, { method: "POST", headers: { "content-type": "application/json" }, body });

/** Arrays of arrays, each asking for 10 items: 10^levels strings from a few hundred bytes of schema. */
function arrayBomb(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "array", minItems: 10, items: schema };
  return schema;
}

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("requests that would cost far more than their size", () => {
  it("a json_schema of nested arrays gets a bounded example from the built-in model", async () => {
    const h = harness({});
    const body = {
      model: "main",
      messages: [{ role: "user", content: "x" }],
      response_format: { type: "json_schema", json_schema: { name: "n", schema: arrayBomb(5) } },
    };
    const res = await post(h, "/v1/chat/completions", JSON.stringify(body));
    expect(res.status).toBe(200);
    const content = (await jsonOf(res)).choices[0].message.content as string;
    expect(content.length).toBeLessThan(64 * 1024);
    expect(Array.isArray(JSON.parse(content))).toBe(true);
  });

  it("so does a forced call of a client tool whose parameters nest arrays", async () => {
    const h = harness({});
    const tools = [{ type: "function", function: { name: "t", parameters: { type: "object", properties: { a: arrayBomb(5) } } } }];
    const body = { model: "main", messages: [{ role: "user", content: "x" }], tools, tool_choice: "required" };
    const res = await post(h, "/v1/chat/completions", JSON.stringify(body));
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).choices[0].message.tool_calls[0].function.arguments.length).toBeLessThan(64 * 1024);
  });

  it.each([
    [
      "/v1/chat/completions",
      `{"model":"main","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"x":${nested(20000)}}}}]}`,
    ],
    [
      "/v1/chat/completions",
      `{"model":"main","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"x":${nested(20000)}}}}}`,
    ],
    ["/v1/responses", `{"model":"main","input":"x","tools":[{"type":"function","name":"t","x":${nested(20000)}}]}`],
    [
      "/v1/responses",
      `{"model":"main","input":"x","tools":[{"type":"function","name":"t"}],"tool_choice":{"type":"function","name":"t","x":${nested(20000)}}}`,
    ],
  ])("%s: a body nested 20,000 deep is 400 invalid_json", async (path, body) => {
    const h = harness({});
    const res = await post(h, path, body);
    expect(res.status).toBe(400);
    const json = await jsonOf(res);
    expect(json.error.code).toBe("invalid_json");
    expect(json.error.message).toMatch(/more than 256 levels deep/);
  });

  it("a body nested 256 deep, brackets in strings not counted, is taken", async () => {
    const h = harness({});
    const body = `{"model":"main","messages":[{"role":"user","content":"[[[[{{{{\\"[["}],"metadata":${nested(255)}}`;
    const res = await post(h, "/v1/chat/completions", body);
    expect(res.status).toBe(200);
  });
});
