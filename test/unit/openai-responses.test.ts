/**
 * The Responses API with the official `openai` SDK's `responses.create`
 * (and `responses.retrieve`), the built-in model answering: a string input,
 * `instructions`, `previous_response_id` continuing a stored response,
 * `store: false` keeping nothing, the client's function tools ending the
 * response with `function_call` items whose `function_call_output` items
 * continue it, the typed events of a streamed response, and OpenAI's error
 * shape for what it refuses.
 */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { type Harness, harness } from "../support/project.js";

function gateway(): { h: Harness; client: OpenAI } {
  const h = harness({});
  const client = new OpenAI({ baseURL: "http://localhost/v1", apiKey: "none", maxRetries: 0, fetch: (url, init) => h.request(String(url), init) });
  return { h, client };
}

const WEATHER = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather.",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: false,
};

describe("POST /v1/responses", () => {
  it("answers a string input, with usage-free output text; the stored response is read back and continued", async () => {
    const { client } = gateway();
    const first = await client.responses.create({ model: "main", input: "hello there", instructions: "Be brief." });
    expect(first.status).toBe("completed");
    expect(first.output_text).toMatch(/^You said: hello there/);
    expect((await client.responses.retrieve(first.id)).id).toBe(first.id);
    const second = await client.responses.create({ model: "main", input: "and again", previous_response_id: first.id });
    expect(second.output_text).toMatch(/^You said: and again/);
    expect(second.previous_response_id).toBe(first.id);
  });

  it("store: false keeps nothing: it cannot be read back nor continued", async () => {
    const { client } = gateway();
    const gone = await client.responses.create({ model: "main", input: "secret", store: false });
    await expect(client.responses.retrieve(gone.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.create({ model: "main", input: "x", previous_response_id: gone.id })).rejects.toMatchObject({ status: 404 });
  });

  it("a call of the client's function ends the response with a function_call item; its output continues it", async () => {
    const { client } = gateway();
    const first = await client.responses.create({ model: "main", input: `CALL get_weather ${JSON.stringify({ city: "Oslo" })}`, tools: [WEATHER] });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"Oslo"}' });
    const second = await client.responses.create({
      model: "main",
      tools: [WEATHER],
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: "sunny" }],
    });
    expect(second.output_text).toBe("Ran 1 tool call:\n1. get_weather: sunny");
  });

  it("streams the typed events: created, output item and text deltas, completed", async () => {
    const { client } = gateway();
    const stream = await client.responses.create({ model: "main", input: "stream me", stream: true });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.output_text.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toMatch(/^You said: stream me/);
  });

  it("refuses an unknown model, a bad body and a last item that is no user message, in OpenAI's shape", async () => {
    const { client } = gateway();
    await expect(client.responses.create({ model: "ghost", input: "x" })).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    await expect(client.responses.create({ model: "main", input: [{ role: "assistant", content: "hm" }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/the last item must be the user's message/),
    });
  });
});
