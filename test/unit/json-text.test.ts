/**
 * A request body with parts serialized once (src/models/json-text.ts): the
 * text on the wire is exactly what JSON.stringify makes of the same body,
 * and a tool set's tools are serialized once however many calls send them.
 */
import { describe, expect, it } from "vitest";
import { JsonText, bodyBytes, jsonTextFor } from "../../src/models/json-text.js";

/** The body as it goes on the wire, read back as text. */
const bodyText = (body: unknown) => bodyBytes(body).toString("utf8");

describe("request bodies with tools serialized once", () => {
  it("the body's text is JSON.stringify's, a JsonText written as the text it holds and keys without JSON left out", () => {
    const tools = [{ type: "function", function: { name: "todo", description: 'say "hi"\n', parameters: { type: "object" } } }];
    const plain = { model: "m", messages: [{ role: "user", content: "é\u2028" }], tools, skipped: undefined, stream: true };
    const held = { ...plain, tools: new JsonText(JSON.stringify(tools)) };
    expect(bodyText(held)).toBe(JSON.stringify(plain));
    expect(JSON.stringify(held)).toBe(JSON.stringify(plain));
    expect(bodyText([1, 2])).toBe("[1,2]");
    expect(bodyText({})).toBe("{}");
    expect(bodyText({ skipped: undefined })).toBe("{}");
    expect(bodyText({ one: new JsonText("[1]") })).toBe('{"one":[1]}');
  });

  it("the body's bytes are the UTF-8 of that text, written piece by piece (multi-byte characters, an escaped lone surrogate) into memory of their own", () => {
    const tools = new JsonText(JSON.stringify([{ name: "é\ud800" }]));
    const bodies: unknown[] = [{ model: "m", messages: new JsonText('[{"content":"你好 🙂"}]'), tools, skipped: undefined }, [1, "é"], {}, "plain"];
    for (const body of bodies) expect(bodyBytes(body).equals(Buffer.from(JSON.stringify(body), "utf8"))).toBe(true);
    // Its own memory: a small body is no view into Node's shared pool, so a fetch that reads `.buffer` reads the body alone.
    const small = bodyBytes({ a: 1 });
    expect(small.byteOffset).toBe(0);
    expect(small.buffer.byteLength).toBe(small.length);
  });

  it("a tool set's wire tools are made once per set, and again for another set", () => {
    const cache = new WeakMap<object, JsonText>();
    let made = 0;
    const make = (specs: { name: string }[]) => {
      made++;
      return specs.map((s) => ({ name: s.name }));
    };
    const one = [{ name: "a" }];
    const first = jsonTextFor(cache, one, make);
    expect(jsonTextFor(cache, one, make)).toBe(first);
    expect(first.text).toBe('[{"name":"a"}]');
    expect(made).toBe(1);
    jsonTextFor(cache, [{ name: "b" }], make);
    expect(made).toBe(2);
  });
});
