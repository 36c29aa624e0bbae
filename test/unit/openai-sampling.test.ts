// biome-ignore-all lint/suspicious/noExplicitAny: the routes' and the wire's JSON, read as the tests check it
/**
 * Sampling and structure a client asks for on the OpenAI-compatible route
 * reach the model: on the OpenAI wire as they were sent (over the entry's
 * own settings), on Anthropic's in its own words (the structure asked for in
 * the system prompt: its API has no response_format). `n` other than 1 and
 * a value out of range are 400 naming the field; the built-in model answers
 * a json_schema request with JSON of that shape.
 */
import { describe, expect, it } from "vitest";
import { AnthropicProvider } from "../../src/models/anthropic.js";
import { harness, jsonOf } from "../support/project.js";
import { WireModel, wireConfig } from "../support/wire-model.js";

const SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 }, tags: { type: "array", items: { type: "string" } } },
  required: ["city", "days", "tags"],
  additionalProperties: false,
};

function post(h: ReturnType<typeof harness>, body: Record<string, unknown>) {
  return h.request("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "main", messages: [{ role: "user", content: "plan a trip" }], ...body }),
  });
}

describe("sampling and structure on /v1/chat/completions", () => {
  it("reach the OpenAI wire as sent, over the entry's own temperature and max_tokens", async () => {
    const model = new WireModel();
    const config = wireConfig();
    (config.model_list as any[])[0].temperature = 0.2;
    (config.model_list as any[])[0].max_tokens = 100;
    const h = harness({ config, models: { fetch: model.fetch } });
    const answer = post(h, {
      temperature: 0.9,
      top_p: 0.5,
      max_completion_tokens: 321,
      stop: "END",
      seed: 7,
      response_format: { type: "json_schema", json_schema: { name: "trip", schema: SCHEMA, strict: true } },
    });
    const call = await model.call(1);
    expect(call.body).toMatchObject({
      temperature: 0.9,
      top_p: 0.5,
      max_tokens: 321,
      stop: ["END"],
      seed: 7,
      response_format: { type: "json_schema", json_schema: { name: "trip", schema: SCHEMA, strict: true } },
    });
    call.text('{"city":"Oslo","days":2,"tags":[]}');
    call.finish();
    expect((await jsonOf(await answer)).choices[0].message.content).toBe('{"city":"Oslo","days":2,"tags":[]}');
    // Without them, the entry's own settings.
    const plain = post(h, {});
    const second = await model.call(2);
    expect(second.body).toMatchObject({ temperature: 0.2, max_tokens: 100 });
    expect(second.body.response_format).toBeUndefined();
    second.finish();
    await plain;
  });

  it("n other than 1, and a value out of range, are 400 naming the field; nothing runs", async () => {
    const model = new WireModel();
    const h = harness({ config: wireConfig(), models: { fetch: model.fetch } });
    const many = await post(h, { n: 2 });
    expect(many.status).toBe(400);
    expect((await jsonOf(many)).error.message).toBe("n: expected one of 1");
    const hot = await post(h, { temperature: 3 });
    expect(hot.status).toBe(400);
    expect((await jsonOf(hot)).error.message).toMatch(/^temperature: /);
    const badName = await post(h, { response_format: { type: "json_schema", json_schema: { name: "has spaces" } } });
    expect(badName.status).toBe(400);
    expect(model.calls).toHaveLength(0);
  });

  it("the built-in model answers a json_schema request with JSON of that shape, and json_object with an object", async () => {
    const h = harness({});
    const res = await post(h, { response_format: { type: "json_schema", json_schema: { name: "trip", schema: SCHEMA } } });
    const value = JSON.parse((await jsonOf(res)).choices[0].message.content);
    expect(value).toEqual({ city: "example (the built-in model)", days: 1, tags: ["example (the built-in model)"] });
    const object = JSON.parse((await jsonOf(await post(h, { response_format: { type: "json_object" } }))).choices[0].message.content);
    expect(object).toEqual({ answer: "plan a trip" });
  });
});

describe("on Anthropic's wire", () => {
  it("temperature, top_p, max_tokens and stop in its names; the structure asked for in the system prompt; one tool call at a time when asked", () => {
    const provider = new AnthropicProvider({ model_name: "claude", provider: "anthropic", model: "claude-x", api_key: "k" } as any);
    const wire = provider.wire({
      messages: [
        { role: "system", content: "You plan." },
        { role: "user", content: "plan a trip" },
      ],
      tools: [{ name: "look", description: "Looks.", parameters: { type: "object" } }],
      signal: new AbortController().signal,
      sampling: {
        temperature: 0.4,
        topP: 0.9,
        maxTokens: 500,
        stop: ["END"],
        seed: 3,
        parallelToolCalls: false,
        responseFormat: { type: "json_schema", name: "trip", schema: SCHEMA },
      },
    });
    const body = wire.body as any;
    expect(body).toMatchObject({
      temperature: 0.4,
      top_p: 0.9,
      max_tokens: 500,
      stop_sequences: ["END"],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
    });
    expect(body.seed).toBeUndefined();
    expect(JSON.stringify(body.system)).toContain("You plan.");
    expect(JSON.stringify(body.system)).toContain('matches this JSON Schema, named \\"trip\\"');
  });
});
