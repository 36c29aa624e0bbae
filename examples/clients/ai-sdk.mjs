// The AI SDK (ai, @ai-sdk/openai-compatible) against PicoClaw-TS: text, then an object of a schema.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, jsonSchema } from "ai";

const picoclaw = createOpenAICompatible({
  name: "picoclaw",
  baseURL: process.env.PICOCLAW_URL ?? "http://127.0.0.1:18790/v1",
  apiKey: process.env.PICOCLAW_TOKEN ?? "none",
  supportsStructuredOutputs: true,
});

const { text } = await generateText({ model: picoclaw("main"), prompt: "Hello!" });
console.log("text:", text.split("\n")[0]);
const { object } = await generateObject({
  model: picoclaw("main"),
  prompt: "Name a city.",
  schema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }),
});
console.log("object:", JSON.stringify(object));
