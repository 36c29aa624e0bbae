/**
 * A client's own tools on /v1/chat/completions, with the official `openai`
 * SDK as the client and the built-in model scripting the calls: offered
 * beside the agent's, a call of one ends the response with
 * finish_reason "tool_calls" (whole or streamed), the client's `tool`
 * messages continue the turn (stateless, and through X-Session-Id), the
 * agent's own calls never reach the client, `tool_choice` forces a call, a
 * name clash is 400.
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import { type Harness, harness } from "../support/project.js";
import { testTools } from "../support/tools.js";

const WEATHER: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

function gateway(): { h: Harness; client: OpenAI } {
  const h = harness({ tools: testTools });
  const client = new OpenAI({ baseURL: "http://localhost/v1", apiKey: "none", maxRetries: 0, fetch: (url, init) => h.request(String(url), init) });
  return { h, client };
}

const call = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args)}`;

describe("the client's tools", () => {
  it("a call of one ends the response with its tool_calls; the client's tool message continues the turn (stateless)", async () => {
    const { client } = gateway();
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: call("get_weather", { city: "Oslo" }) }];
    const first = await client.chat.completions.create({ model: "main", messages, tools: [WEATHER] });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toEqual([{ id: expect.any(String), type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
    const asked = choice.message.tool_calls![0]!;
    const second = await client.chat.completions.create({
      model: "main",
      tools: [WEATHER],
      messages: [...messages, choice.message, { role: "tool", tool_call_id: asked.id, content: "sunny, 4 °C" }],
    });
    expect(second.choices[0]!.finish_reason).toBe("stop");
    expect(second.choices[0]!.message.content).toBe("Ran 1 tool call:\n1. get_weather: sunny, 4 °C");
  });

  it("the agent's own calls stay inside: only the client's reach it", async () => {
    const { client } = gateway();
    const res = await client.chat.completions.create({
      model: "main",
      tools: [WEATHER],
      messages: [{ role: "user", content: `${call("echo", { text: "inside" })}\n${call("get_weather", { city: "Rome" })}` }],
    });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls!.map((c) => c.type === "function" && c.function.name)).toEqual(["get_weather"]);
    // echo's output is what a chat user sees (it is not silent), not a tool call.
    expect(choice.message.content).toBe("echo: inside");
  });

  it("through X-Session-Id the session keeps the turn, and the tool message continues it", async () => {
    const { h, client } = gateway();
    const headers = { "X-Session-Id": "tools1" };
    const first = await client.chat.completions.create(
      { model: "main", tools: [WEATHER], messages: [{ role: "user", content: call("get_weather", { city: "Lima" }) }] },
      { headers },
    );
    const asked = first.choices[0]!.message.tool_calls![0]!;
    const second = await client.chat.completions.create(
      {
        model: "main",
        tools: [WEATHER],
        messages: [
          { role: "user", content: call("get_weather", { city: "Lima" }) },
          first.choices[0]!.message,
          { role: "tool", tool_call_id: asked.id, content: "foggy" },
        ],
      },
      { headers },
    );
    expect(second.choices[0]!.message.content).toBe("Ran 1 tool call:\n1. get_weather: foggy");
    const history = await h.runtime.historyOf("agent:main:openai:tools1");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("a session whose client sent a new message instead of the result stays whole: the call gets a result saying so", async () => {
    const { h, client } = gateway();
    const headers = { "X-Session-Id": "tools2" };
    await client.chat.completions.create(
      { model: "main", tools: [WEATHER], messages: [{ role: "user", content: call("get_weather", { city: "Oslo" }) }] },
      { headers },
    );
    const next = await client.chat.completions.create({ model: "main", messages: [{ role: "user", content: "never mind" }] }, { headers });
    expect(next.choices[0]!.message.content).toMatch(/^You said: never mind/);
    const history = await h.runtime.historyOf("agent:main:openai:tools2");
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
    expect(history[2]).toMatchObject({ role: "tool", content: expect.stringMatching(/^\[No result: the client did not run this call/) });
  });

  it("streams the call as OpenAI does: a tool_calls delta, then finish_reason tool_calls", async () => {
    const { client } = gateway();
    const stream = await client.chat.completions.create({
      model: "main",
      tools: [WEATHER],
      stream: true,
      messages: [{ role: "user", content: call("get_weather", { city: "Oslo" }) }],
    });
    const deltas: unknown[] = [];
    let finish: string | null = null;
    for await (const part of stream) {
      const choice = part.choices[0];
      if (choice?.delta.tool_calls) deltas.push(...choice.delta.tool_calls);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(finish).toBe("tool_calls");
    expect(deltas).toEqual([{ index: 0, id: expect.any(String), type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
  });

  it("tool_choice required makes the model call a tool (the built-in model: with arguments of its shape)", async () => {
    const { client } = gateway();
    const res = await client.chat.completions.create({
      model: "main",
      tools: [WEATHER],
      tool_choice: "required",
      messages: [{ role: "user", content: "weather?" }],
    });
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(res.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: "get_weather", arguments: '{"city":"example (the built-in model)"}' } });
  });

  it("a tool named like one of the agent's, a tool_choice naming no tool, and results without their calls are 400", async () => {
    const { client } = gateway();
    const echo: ChatCompletionTool = { type: "function", function: { name: "echo", parameters: { type: "object" } } };
    await expect(client.chat.completions.create({ model: "main", tools: [echo], messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/tools: "echo" is the name of one of the agent's own tools/),
    });
    await expect(
      client.chat.completions.create({
        model: "main",
        tools: [WEATHER],
        tool_choice: { type: "function", function: { name: "nope" } },
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/tool_choice: there is no tool named "nope"/) });
    await expect(
      client.chat.completions.create({
        model: "main",
        tools: [WEATHER],
        messages: [
          { role: "user", content: "hi" },
          { role: "tool", tool_call_id: "x", content: "?" },
        ],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/tool results must follow the assistant message whose tool_calls they answer/) });
  });
});
