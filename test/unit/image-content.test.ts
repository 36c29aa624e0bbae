import { describe, expect, it } from "vitest";
import { RequestError } from "../../src/errors.js";
import { fromOpenAIContent } from "../../src/gateway/images.js";
import { toAnthropic } from "../../src/models/anthropic-messages.js";
import { NO_VISION_NOTE } from "../../src/models/content.js";
import type { ChatMessage } from "../../src/models/message.js";
import { toWire } from "../../src/models/openai.js";
import { IMAGE_LIMITS, imageProblem } from "../../src/runtime/turn/images.js";
import { SessionCache } from "../../src/session/session-cache.js";

const PNG = `data:image/png;base64,${Buffer.from("png bytes").toString("base64")}`;
const PHOTO = "https://example.test/cat.jpg";

/** The RequestError a call throws (fails the test when it does not throw one). */
function refusal(run: () => unknown): RequestError {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error("expected a RequestError");
}

describe("an OpenAI chat-completions message's content as the runtime's message (for the OpenAI-compatible endpoint)", () => {
  it("takes a string as the text", () => {
    expect(fromOpenAIContent("hello", ["messages", 0, "content"])).toEqual({ text: "hello", images: [] });
  });

  it("joins text parts by blank lines and keeps image_url parts in order, with their detail", () => {
    const content = [
      { type: "text", text: "Compare" },
      { type: "image_url", image_url: { url: PHOTO } },
      { type: "text", text: "with" },
      { type: "image_url", image_url: { url: PNG, detail: "high" } },
    ];
    expect(fromOpenAIContent(content, ["messages", 1, "content"])).toEqual({
      text: "Compare\n\nwith",
      images: [{ url: PHOTO }, { url: PNG, detail: "high" }],
    });
  });

  it("refuses other part types, malformed parts and bad images with a 400 naming each by its JSON path", () => {
    const error = refusal(() =>
      fromOpenAIContent(
        [
          { type: "input_audio", input_audio: { data: "..", format: "wav" } },
          { type: "text" },
          { type: "image_url", image_url: { url: "data:application/pdf;base64,JVBERi0=" } },
          { type: "image_url", image_url: { url: PHOTO, detail: "ultra" } },
        ],
        ["messages", 2, "content"],
      ),
    );
    expect(error.code).toBe("invalid_request");
    expect(error.message).toBe(
      [
        'messages[2].content[0].type: "input_audio" parts are not taken (only "text" and "image_url")',
        "messages[2].content[1].text: required (expected string)",
        'messages[2].content[2].image_url.url: data URL of type "application/pdf"; expected one of image/png, image/jpeg, image/gif, image/webp',
        'messages[2].content[3].image_url.detail: expected one of "auto", "low", "high"',
      ].join("; "),
    );
  });

  it("refuses content that is neither a string nor a list, and more images than a message may carry", () => {
    expect(refusal(() => fromOpenAIContent(42, ["messages", 0, "content"])).message).toBe(
      'messages[0].content: expected a string or a list of "text" and "image_url" parts',
    );
    const many = Array.from({ length: IMAGE_LIMITS.perMessage + 1 }, () => ({ type: "image_url", image_url: { url: PHOTO } }));
    expect(refusal(() => fromOpenAIContent(many, ["messages", 0, "content"])).message).toBe("messages[0].content: 9 images; a message may carry at most 8");
  });
});

describe("image limits", () => {
  it("refuses a data URL image over 5 MiB, decoded", () => {
    const groups = Math.floor(IMAGE_LIMITS.dataBytes / 3); // 4 base64 characters make 3 bytes
    const big = `data:image/jpeg;base64,${"A".repeat((groups + 1) * 4)}`;
    expect(imageProblem(big)).toMatch(/^the image is \d+ bytes, over the 5242880 \(5 MiB\) an image may hold$/);
    const fits = `data:image/jpeg;base64,${"A".repeat(groups * 4)}`;
    expect(imageProblem(fits)).toBeUndefined();
  });

  it("refuses an http(s) URL over 8192 characters", () => {
    expect(imageProblem(`https://example.test/${"a".repeat(8192)}`)).toBe("the URL is over 8192 characters");
  });
});

describe("a history holding images", () => {
  it("keeps an exchange's images while it fits, and turns them into notes (never cut in half) when it does not", () => {
    const image = `data:image/png;base64,${"A".repeat(40_000)}`;
    const exchange: ChatMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "What is it?" },
          { type: "image_url", image_url: { url: image } },
        ],
      },
      { role: "assistant", content: "A square." },
    ];
    const roomy = new SessionCache({ maxBytes: 64 * 1024 });
    roomy.append("s", exchange);
    expect(roomy.get("s")).toEqual(exchange);

    const tight = new SessionCache({ maxBytes: 16 * 1024 });
    tight.append("s", exchange);
    expect(tight.get("s")).toEqual([
      {
        role: "user",
        content: `What is it?\n\n[an image was left out: it took ${image.length} bytes; a session's history keeps at most 16384 (agents.defaults.max_history_bytes)]`,
      },
      { role: "assistant", content: "A square." },
    ]);
  });
});

describe("a model without vision", () => {
  const withImage: ChatMessage[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "Look:" },
        { type: "image_url", image_url: { url: PNG } },
      ],
    },
  ];

  it("gets a note in place of each image, from either adapter", () => {
    expect(toWire(withImage[0]!, false)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Look:" },
        { type: "text", text: NO_VISION_NOTE },
      ],
    });
    expect(toAnthropic(withImage, { vision: false }).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "text", text: NO_VISION_NOTE },
        ],
      },
    ]);
  });
});
