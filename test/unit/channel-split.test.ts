/**
 * Splitting a long answer into the messages a chat app accepts: at line
 * boundaries, losing nothing, each message readable on its own.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessages, splitText } from "../../src/channels/split.js";

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

  it("closes a code block with the fence that opened it (~~~, ````), and a fence line with an info string inside one is content", () => {
    const tildes = ["~~~", "aaaaaaaa", "bbbbbbbb", "~~~", "after"].join("\n");
    expect(splitText(tildes, 16)).toEqual(["~~~\naaaaaaaa\n~~~", "~~~\nbbbbbbbb\n~~~", "after"]);
    const nested = ["````md", "```ts", "x = 1", "```", "````"].join("\n");
    const chunks = splitText(nested, 18);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(18);
      expect(chunk.startsWith("````md")).toBe(true);
      expect(chunk.endsWith("````")).toBe(true);
    }
    // The inner ``` neither opened nor closed anything: without the outer fences, the content is whole, in order.
    const content = chunks.flatMap((chunk) => chunk.split("\n")).filter((line) => line !== "````md" && line !== "````");
    expect(content).toEqual(["```ts", "x = 1", "```"]);
  });

  it("a long answer with a long code block goes as 2,000-character messages, each with its fences in pairs, none of the code lost", () => {
    const code = Array.from({ length: 120 }, (_, i) => `  step(${i}, "${"z".repeat(25)}");`);
    const text = ["Intro", "```js", ...code, "```", "Outro"].join("\n");
    const chunks = splitText(text, 2000);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect((chunk.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    for (const chunk of chunks.slice(1, -1)) expect(chunk.startsWith("```js\n")).toBe(true);
    const body = chunks.join("\n");
    for (const line of code) expect(body).toContain(line);
  });

  it("sends at most the messages allowed for one text, the last saying how much was left out", () => {
    const messages = splitMessages("line\n".repeat(3000), 100, 5);
    expect(messages).toHaveLength(5);
    expect(messages[4]).toMatch(/^\[The rest of this answer, \d+ characters, was not sent: it is too long for a chat\.\]$/);
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
