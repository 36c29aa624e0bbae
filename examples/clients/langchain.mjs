// LangChain.js (@langchain/openai) against PicoClaw-TS: a message, then a structured answer.
import { ChatOpenAI } from "@langchain/openai";

const chat = new ChatOpenAI({
  model: "main",
  apiKey: process.env.PICOCLAW_TOKEN ?? "none",
  configuration: { baseURL: process.env.PICOCLAW_URL ?? "http://127.0.0.1:18790/v1" },
});

const reply = await chat.invoke("Hello!");
console.log("reply:", String(reply.content).split("\n")[0]);
const city = await chat
  .withStructuredOutput(
    { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
    { name: "city", method: "jsonSchema" },
  )
  .invoke("Name a city.");
console.log("structured:", JSON.stringify(city));
