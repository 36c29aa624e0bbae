/**
 * Three OpenAI clients nobody here wrote, against the real gateway process
 * (`node dist/main.js gateway`, the built-in model): the AI SDK 6 with
 * `@ai-sdk/openai-compatible`, and LangChain.js `@langchain/openai` (the
 * official `openai` SDK drives the unit tests). Plain text, a client tool
 * the model must call (`toolChoice: "required"` / `bindTools`), structured
 * output (`generateObject`'s json_schema / `withStructuredOutput`), and the
 * Responses API through LangChain's `useResponsesApi`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, generateText, jsonSchema, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeProject } from "../support/project.js";
import { within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
let gateway: ChildProcess;
let url: string;
let project: string;

beforeAll(async () => {
  // A folder of its own for the whole file (tempDir's clean-up is per test).
  project = mkdtempSync(path.join(tmpdir(), "picoclaw-clients-"));
  writeProject({ config: {} }, project);
  gateway = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  gateway.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  url = await within(
    "the gateway to listen",
    new Promise<string>((resolve) =>
      gateway.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1]!);
      }),
    ),
    { instead: () => output },
  );
}, 60_000);

afterAll(async () => {
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((resolve) => gateway.once("exit", resolve));
    gateway.kill("SIGTERM");
    await exited;
  }
  if (project) rmSync(project, { recursive: true, force: true });
});

const weatherSchema = { type: "object" as const, properties: { city: { type: "string" as const } }, required: ["city"], additionalProperties: false };

describe("the AI SDK (@ai-sdk/openai-compatible)", () => {
  const provider = () => createOpenAICompatible({ name: "picoclaw", baseURL: `${url}/v1`, apiKey: "none", supportsStructuredOutputs: true });

  it("generateText answers; a required tool is called with its arguments", async () => {
    const text = await generateText({ model: provider()("main"), prompt: "hello", maxRetries: 0 });
    expect(text.text).toMatch(/^You said: hello/);
    const called = await generateText({
      model: provider()("main"),
      prompt: "what is the weather?",
      tools: { get_weather: tool({ description: "The weather.", inputSchema: jsonSchema(weatherSchema) }) },
      toolChoice: "required",
      maxRetries: 0,
    });
    expect(called.finishReason).toBe("tool-calls");
    expect(called.toolCalls[0]).toMatchObject({ toolName: "get_weather", input: { city: "example (the built-in model)" } });
  });

  it("generateObject gets JSON of the schema", async () => {
    const result = await generateObject({ model: provider()("main"), prompt: "a city", schema: jsonSchema(weatherSchema), maxRetries: 0 });
    expect(result.object).toEqual({ city: "example (the built-in model)" });
  });
});

describe("LangChain.js (@langchain/openai)", () => {
  const chat = (extra: Record<string, unknown> = {}) =>
    new ChatOpenAI({ model: "main", apiKey: "none", configuration: { baseURL: `${url}/v1` }, maxRetries: 0, ...extra });

  it("invoke answers; bindTools with a required tool gets the call", async () => {
    expect(String((await chat().invoke("hello")).content)).toMatch(/^You said: hello/);
    const bound = chat().bindTools([{ type: "function", function: { name: "get_weather", description: "The weather.", parameters: weatherSchema } }], {
      tool_choice: "required",
    });
    const message = await bound.invoke("weather?");
    expect(message.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "example (the built-in model)" } });
  });

  it("withStructuredOutput gets an object of the schema", async () => {
    const structured = chat().withStructuredOutput(weatherSchema, { name: "weather", method: "jsonSchema" });
    expect(await structured.invoke("a city")).toEqual({ city: "example (the built-in model)" });
  });

  it("useResponsesApi goes through /v1/responses", async () => {
    const message = await chat({ useResponsesApi: true }).invoke("hello responses");
    expect(JSON.stringify(message.content)).toMatch(/You said: hello responses/);
  });
});

describe("README's client examples, run as they are", () => {
  const run = async (file: string) => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, "examples", "clients", file)], {
      cwd: root,
      env: { ...process.env, PICOCLAW_URL: `${url}/v1` },
      timeout: 30_000,
    });
    return stdout;
  };

  it("the openai SDK's: a client tool, its result, a Responses conversation", async () => {
    const lines = (await run("openai-sdk.mjs")).split("\n");
    expect(lines.slice(0, 3)).toEqual([
      'tool call: get_weather {"city":"example (the built-in model)"}',
      "answer: Ran 1 tool call:",
      "1. get_weather: sunny, 4 °C",
    ]);
    expect(lines[3]).toBe("responses: You said: And again.");
  });

  it("the AI SDK's: text, then an object of the schema", async () => {
    expect((await run("ai-sdk.mjs")).split("\n")).toEqual(["text: You said: Hello!", 'object: {"city":"example (the built-in model)"}', ""]);
  });

  it("LangChain's: a message, then a structured answer", async () => {
    expect((await run("langchain.mjs")).split("\n")).toEqual(["reply: You said: Hello!", 'structured: {"city":"example (the built-in model)"}', ""]);
  });
});
