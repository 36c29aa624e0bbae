// The official openai SDK against PicoClaw-TS: a client tool, its result sent back, then a Responses conversation.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.PICOCLAW_URL ?? "http://127.0.0.1:18790/v1", apiKey: process.env.PICOCLAW_TOKEN ?? "none" });
const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
];
const messages = [{ role: "user", content: "What is the weather in Oslo?" }];

const first = await client.chat.completions.create({ model: "main", messages, tools, tool_choice: "required" });
const call = first.choices[0].message.tool_calls[0];
console.log("tool call:", call.function.name, call.function.arguments);
messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "sunny, 4 °C" });
const second = await client.chat.completions.create({ model: "main", messages, tools });
console.log("answer:", second.choices[0].message.content);

const hello = await client.responses.create({ model: "main", input: "Hello!" });
const again = await client.responses.create({ model: "main", input: "And again.", previous_response_id: hello.id });
console.log("responses:", again.output_text);
