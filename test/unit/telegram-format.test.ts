/**
 * What a long or formatted answer looks like in a Telegram chat: at most so
 * many messages, Markdown as the HTML Telegram accepts.
 */
import { describe, expect, it } from "vitest";
import { telegramHtml } from "../../src/features/telegram/html.js";
import { MAX_MESSAGES_PER_TEXT, MESSAGE_LIMIT, markdownOf, messagesOf } from "../../src/features/telegram/send.js";
import { parseHtml } from "../support/fake-telegram.js";

describe("a long answer in Telegram", () => {
  it(`sends at most ${MAX_MESSAGES_PER_TEXT} messages for one text, the last saying how much was left out`, () => {
    const huge = Array.from({ length: 30 }, () => "y".repeat(MESSAGE_LIMIT - 10)).join("\n");
    const messages = messagesOf(huge);
    expect(messages).toHaveLength(MAX_MESSAGES_PER_TEXT);
    expect(messages.at(-1)).toMatch(/^\[The rest of this answer, \d+ characters, was not sent: it is too long for a chat\.\]$/);
  });
});

describe("Markdown as Telegram HTML", () => {
  it("turns the usual Markdown into Telegram's tags and escapes the rest", () => {
    expect(telegramHtml("**bold**, __also__, *it*, _it_, ~~gone~~ and `a<b>`")).toBe(
      "<b>bold</b>, <b>also</b>, <i>it</i>, <i>it</i>, <s>gone</s> and <code>a&lt;b&gt;</code>",
    );
    expect(telegramHtml("# Title\n- one\n* two\n> quoted\n> more\n[site](https://example.com/?a=1&b=2)")).toBe(
      '<b>Title</b>\n• one\n• two\n<blockquote>quoted\nmore</blockquote>\n<a href="https://example.com/?a=1&amp;b=2">site</a>',
    );
    expect(telegramHtml("```python\nif a < b and c > d:\n    print(**x)\n```")).toBe(
      '<pre><code class="language-python">if a &lt; b and c &gt; d:\n    print(**x)</code></pre>',
    );
  });

  it("leaves what only looks like Markdown alone", () => {
    expect(telegramHtml("snake_case_name, 2*3*4, a & b, <script>, [x](javascript:alert(1))")).toBe(
      "snake_case_name, 2*3*4, a &amp; b, &lt;script&gt;, [x](javascript:alert(1))",
    );
  });

  it("what it makes, Telegram parses, and the user reads the words without the markers", () => {
    const samples = ["**a** _b_ `c` ~~d~~", "# H\n> q\n- l", "```\nx < y\n```", "a\uE0001\uE001b", "&amp; &lt; <b>"];
    for (const sample of samples) expect(parseHtml(telegramHtml(sample))).not.toHaveProperty("error");
    expect(parseHtml(telegramHtml("a\uE0001\uE001b"))).toEqual({ text: "a\uE0001\uE001b" });
    expect(parseHtml(telegramHtml("&amp; &lt; <b>"))).toEqual({ text: "&amp; &lt; <b>" });
  });
});

describe("what a text is sent as", () => {
  it("reads no Markdown inside code, and leaves HTML comments out (outside code only)", () => {
    expect(telegramHtml("`**milk**` and ``a **b** `` and **c**")).toBe("<code>**milk**</code> and <code>a **b**</code> and <b>c</b>");
    expect(telegramHtml('- [x] Draft <!-- {"id":"1"} -->\n`<!-- kept -->`')).toBe("• [x] Draft\n<code>&lt;!-- kept --&gt;</code>");
  });

  it("sends a JSON document as a code block, and nothing that only starts like one", () => {
    expect(markdownOf(' {"a":"**milk**"}\n')).toBe('```json\n{"a":"**milk**"}\n```');
    expect(telegramHtml(markdownOf('[{"a":"**milk**"}]'))).toBe('<pre><code class="language-json">[{"a":"**milk**"}]</code></pre>');
    expect(markdownOf("[1, 2")).toBe("[1, 2");
    expect(markdownOf("{not json} **b**")).toBe("{not json} **b**");
  });
});
