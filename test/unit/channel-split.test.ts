/**
 * Splitting a long answer into the messages a chat app accepts: at line
 * boundaries, losing nothing, each message readable on its own.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitText } from "../../src/channels/split.js";

describe("splitting a long text", () => {
  it("keeps a text that fits as it is", () => {
    expect(splitText("one\ntwo", 10)).toEqual(["one\ntwo"]);
    expect(splitText("   ", 10)).toEqual([]);
  });

  it("splits at line boundaries, losing nothing (each chunk keeps room to close a code block)", () => {
    expect(splitText("aaaa\nbbbb\ncccc\ndddd", 12)).toEqual(["aaaa", "bbbb", "cccc", "dddd"]);
    expect(splitText("aa\nbb\ncc\ndd\nee\nff", 13)).toEqual(["aa\nbb\ncc", "dd\nee\nff"]);
  });

  it("cuts a single longer line hard, never inside a surrogate pair", () => {
    expect(splitText("x".repeat(20), 10)).toEqual(["xxxxxx", "xxxxxx", "xxxxxx", "xx"]);
    const emoji = "😀".repeat(10);
    const chunks = splitText(emoji, 10);
    expect(chunks.join("")).toBe(emoji);
    for (const chunk of chunks) expect(chunk.length % 2).toBe(0);
  });

  it("closes a code block at a chunk's end and opens it again in the next", () => {
    const text = ["Look:", "```ts", "const a = 1;", "const b = 2;", "const c = 3;", "```", "Done."].join("\n");
    const chunks = splitText(text, 36);
    expect(chunks).toEqual(["Look:\n```ts\nconst a = 1;\n```", "```ts\nconst b = 2;\nconst c = 3;\n```", "Done."]);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(36);
  });

  it("every chunk fits, and without code blocks no line with text is lost or changed (blank lines between chunks may go)", () => {
    const line = fc.string({ unit: fc.constantFrom("a", "b", " ", "é", "😀", "*"), maxLength: 120 });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), fc.integer({ min: 12, max: 200 }), (lines, limit) => {
        const text = lines.join("\n");
        const chunks = splitText(text, limit);
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(limit);
        const fits = lines.every((l) => l.length <= limit - 4);
        // A chunk of only white space is never sent, so a blank line at a cut may go; every line with text stays, in order.
        const withText = (t: string) => t.split("\n").filter((l) => l.trim() !== "");
        if (fits) expect(withText(chunks.join("\n"))).toEqual(withText(text));
      }),
    );
  });
});
