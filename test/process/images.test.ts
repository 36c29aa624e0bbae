import { describe, expect, it } from "vitest";
import { NO_VISION_NOTE } from "../../src/models/content.js";
import { anthropicTextStream } from "../support/fake-anthropic.js";
import { completionChunk, sseChunks } from "../support/fake-openai.js";
import { fakeServer, instantRetries } from "../support/models.js";
import { harness, jsonOf, openaiConfig } from "../support/project.js";

/** Images sent with POST /v1/chat, through the whole gateway to fake model servers. */

const PNG = `data:image/png;base64,${Buffer.from("a tiny png").toString("base64")}`;
const PHOTO = "https://example.test/cat.jpg";
const ok = () => ({ chunks: sseChunks([completionChunk({ role: "assistant", content: "A cat." }), completionChunk({}, { finish: "stop" })]) });

const anthropicConfig = (url: string, extra: Record<string, unknown> = {}) => ({
  agents: { defaults: { model_name: "claude" } },
  model_list: [{ model_name: "claude", provider: "anthropic", model: "claude-fake", api_base: url, api_key: "sk-ant-test-999", ...extra }],
});

describe("POST /v1/chat with images", () => {
  it("sends them to an OpenAI-compatible model as image_url parts after the text, and the history keeps them so", async () => {
    const server = await fakeServer(ok);
    const h = harness({ config: openaiConfig(server.url) });
    const res = await h.chat({ message: "What is this?", images: [{ url: PHOTO }, { url: PNG, detail: "low" }] });
    expect(res.status).toBe(200);
    expect(res.json.reply).toBe("A cat.");
    const message = {
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: PHOTO } },
        { type: "image_url", image_url: { url: PNG, detail: "low" } },
      ],
    };
    expect(server.requests[0]!.body.messages.at(-1)).toEqual(message);
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:default/history"));
    expect(history.messages).toEqual([message, { role: "assistant", content: "A cat." }]);
  });

  it("sends them to Anthropic as image blocks: a data URL as base64, an https URL by URL", async () => {
    const server = await fakeServer(() => anthropicTextStream("Two cats."));
    const h = harness({ config: anthropicConfig(server.url) });
    await h.chat({ message: "And these?", images: [{ url: PNG }, { url: PHOTO }] });
    expect(server.requests[0]!.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "And these?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: Buffer.from("a tiny png").toString("base64") } },
          { type: "image", source: { type: "url", url: PHOTO } },
        ],
      },
    ]);
  });

  it("sends images alone when the message is empty", async () => {
    const server = await fakeServer(ok);
    const h = harness({ config: openaiConfig(server.url) });
    await h.chat({ message: "", images: [{ url: PHOTO }] });
    expect(server.requests[0]!.body.messages.at(-1).content).toEqual([{ type: "image_url", image_url: { url: PHOTO } }]);
  });

  it("answers 400 images_not_supported for a model entry without vision, and never asks the model", async () => {
    const server = await fakeServer(ok);
    const h = harness({ config: openaiConfig(server.url, { vision: false }) });
    const res = await h.chat({ message: "What is this?", images: [{ url: PHOTO }] });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: {
        code: "images_not_supported",
        message:
          'agent "main" answers with model "fake", which takes no images (model_list[0].vision is false); send the text alone, or give the agent a model with vision',
      },
    });
    expect(server.requests).toHaveLength(0);
    const history = await jsonOf(await h.request("/v1/sessions/agent:main:http:default/history"));
    expect(history.messages).toEqual([]);
    // The same message without the image goes through.
    expect((await h.chat({ message: "What is this?" })).status).toBe(200);
  });

  it("a fallback without vision gets a note in place of each image", async () => {
    const primary = await fakeServer(() => ({ status: 503, json: { error: { message: "down" } } }));
    const backup = await fakeServer(ok);
    const config = openaiConfig(primary.url, { fallbacks: ["text-only"] });
    (config.model_list as unknown[]).push({ model_name: "text-only", provider: "openai", model: "small", api_base: backup.url, vision: false });
    const h = harness({ config, models: instantRetries() });
    const res = await h.chat({ message: "What is this?", images: [{ url: PHOTO }] });
    expect(res.status).toBe(200);
    expect(primary.requests[0]!.body.messages.at(-1).content[1]).toEqual({ type: "image_url", image_url: { url: PHOTO } });
    expect(backup.requests[0]!.body.messages.at(-1).content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "text", text: NO_VISION_NOTE },
    ]);
  });
});

describe("POST /v1/chat refuses bad images before anything runs", () => {
  it("answers the built-in model's lack of vision with 400 images_not_supported", async () => {
    const res = await harness().chat({ message: "look", images: [{ url: PHOTO }] });
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({
      code: "images_not_supported",
      message:
        'agent "main" answers with model "local", which takes no images (the built-in model reads text only); send the text alone, or give the agent a model with vision',
    });
  });

  it.each([
    [[{ url: "data:text/plain;base64,aGk=" }], 'images[0].url: data URL of type "text/plain"; expected one of image/png, image/jpeg, image/gif, image/webp'],
    [[{ url: "data:image/png,rawbytes" }], "images[0].url: a data URL must be base64 (data:image/png;base64,...)"],
    [[{ url: "data:image/png;base64,not base64!" }], "images[0].url: the data URL's base64 is not valid"],
    [[{ url: PHOTO }, { url: "ftp://example.test/cat.jpg" }], "images[1].url: ftp URLs are not taken; expected https://... or data:image/...;base64,..."],
    [[{ url: "cat.jpg" }], "images[0].url: not a URL (expected https://... or data:image/...;base64,...)"],
    [Array.from({ length: 9 }, () => ({ url: PHOTO })), "images: 9 images; a message may carry at most 8"],
  ])("%#: %s", async (images, message) => {
    const server = await fakeServer(ok);
    const h = harness({ config: openaiConfig(server.url) });
    const res = await h.chat({ message: "look", images });
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({ code: "invalid_request", message });
    expect(server.requests).toHaveLength(0);
  });

  it("refuses an image entry with an unknown field or no url", async () => {
    const h = harness();
    expect((await h.chat({ message: "look", images: [{ url: PHOTO, size: 3 }] })).json.error.message).toBe('images[0]: unknown key "size"');
    expect((await h.chat({ message: "look", images: [{}] })).json.error.message).toBe("images[0].url: required (expected string)");
  });

  it("refuses images sent with a command", async () => {
    const server = await fakeServer(ok);
    const res = await harness({ config: openaiConfig(server.url) }).chat({ message: "/clear", images: [{ url: PHOTO }] });
    expect(res.status).toBe(400);
    expect(res.json.error).toEqual({ code: "invalid_request", message: "images go with a message for the agent, not with a command (/clear)" });
  });
});
