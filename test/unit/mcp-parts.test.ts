import { describe, expect, it } from "vitest";
import { Backoff } from "../../src/features/mcp/backoff.js";
import { checkInputSchema } from "../../src/tools/json-schema.js";
import { MESSAGE_TOO_LARGE, idOf, tooLarge, tooLargeMessage } from "../../src/features/mcp/message-size.js";
import { BoundedReadBuffer } from "../../src/features/mcp/stdio-buffer.js";
import { isUsableToolName, mcpToolName } from "../../src/features/mcp/names.js";
import { mcpResult } from "../../src/features/mcp/result.js";

const valid = (raw: unknown) => {
  const checked = checkInputSchema(raw);
  if (!checked.ok) throw new Error(checked.problem);
  return checked;
};
const problemOf = (raw: unknown) => {
  const checked = checkInputSchema(raw);
  return checked.ok ? "valid" : checked.problem;
};

describe("MCP tool names", () => {
  it("are mcp_<server>_<tool> with every other character made _", () => {
    expect(mcpToolName("files", "read_file")).toBe("mcp_files_read_file");
    expect(mcpToolName("gh", "repos.list/all")).toBe("mcp_gh_repos_list_all");
    expect(mcpToolName("x", "café 🙂")).toBe("mcp_x_caf___");
  });

  it("are usable up to 64 characters", () => {
    expect(isUsableToolName(mcpToolName("s", "t".repeat(58)))).toBe(true);
    expect(isUsableToolName(mcpToolName("s", "t".repeat(59)))).toBe(false);
  });
});

describe("MCP input schemas", () => {
  it("accept an object schema, show it without $schema, and check arguments with it", () => {
    const checked = valid({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { items: { type: "array", items: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } } },
      required: ["items"],
    });
    expect(checked.schema).not.toHaveProperty("$schema");
    expect(checked.validate({ items: [{ id: "a" }] })).toEqual([]);
    expect(checked.validate({ items: [{ id: 1 }, {}] })).toEqual(["items[0].id: must be string", "items[1].id: required"]);
  });

  it("understand draft-07 and 2019-09, and take a draft-07 schema that does not say so", () => {
    expect(valid({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", definitions: {} }).validate({})).toEqual([]);
    expect(valid({ $schema: "https://json-schema.org/draft/2019-09/schema", type: "object" }).validate({})).toEqual([]);
    const tuple = valid({ type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }] } } });
    expect(tuple.validate({ pair: ["a", "b"] })).toEqual(["pair[1]: must be number"]);
  });

  it("let two tools use the same $id, and resolve local references", () => {
    const schema = { $id: "https://example.com/args.json", type: "object", properties: { n: { $ref: "#/$defs/n" } }, $defs: { n: { type: "integer" } } };
    valid(schema);
    expect(valid({ ...schema }).validate({ n: 1.5 })).toEqual(["n: must be integer"]);
  });

  it("refuse what is not a valid JSON Schema of an object, saying why", () => {
    expect(problemOf(null)).toBe("its inputSchema is not a JSON object");
    expect(problemOf({ type: "array" })).toBe('its inputSchema does not have type "object" at the top');
    expect(problemOf({ properties: {} })).toBe('its inputSchema does not have type "object" at the top');
    expect(problemOf({ type: "object", properties: { a: { type: "nonsense" } } })).toMatch(/^its inputSchema is not a valid JSON Schema: /);
    expect(problemOf({ type: "object", properties: { a: { $ref: "#/$defs/missing" } } })).toMatch(/can't resolve reference/);
    expect(problemOf({ $schema: "http://json-schema.org/draft-04/schema#", type: "object" })).toBe(
      'its inputSchema uses an unsupported $schema "http://json-schema.org/draft-04/schema#"',
    );
  });

  it("tolerate keywords and formats they do not know", () => {
    expect(valid({ type: "object", "x-ui": { widget: "big" }, properties: { mail: { type: "string", format: "email" } } }).validate({ mail: "nope" })).toEqual(
      [],
    );
  });
});

describe("MCP results", () => {
  it("join text, describe other content, and fall back to structured content", () => {
    expect(
      mcpResult("s", "t", {
        content: [
          { type: "text", text: "one" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource", resource: { uri: "mem://x", mimeType: "application/pdf", blob: "AAA=" } },
          { type: "video", url: "v" },
        ],
      }).forLLM,
    ).toBe("one\n[audio: audio/wav, 3 bytes]\n[resource <mem://x>: application/pdf, 2 bytes]\n[video content the gateway cannot show]");
    expect(mcpResult("s", "t", { content: [], structuredContent: { temp: 21 } })).toEqual({ forLLM: '{"temp":21}', silent: false, isError: false });
  });

  it("always give the model something to read", () => {
    expect(mcpResult("s", "t", { content: [] }).forLLM).toBe('MCP tool "t" of server "s" returned no output');
    expect(mcpResult("s", "t", { content: [], isError: true })).toEqual({
      forLLM: 'MCP tool "t" of server "s" reported an error without a message',
      silent: false,
      isError: true,
    });
  });
});

describe("restart backoff", () => {
  it("doubles from 0.5 s up to 30 s with jitter between half and all of each step, and starts over on reset", () => {
    const low = new Backoff({ random: () => 0 });
    expect(Array.from({ length: 9 }, () => low.next())).toEqual([250, 500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
    const high = new Backoff({ random: () => 0.999_999 });
    expect(Array.from({ length: 8 }, () => high.next())).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    high.reset();
    expect(high.next()).toBe(500);
  });
});

describe("MCP messages over the size limit (the stdio read buffer)", () => {
  const read = (buffer: BoundedReadBuffer) => {
    const out = [];
    for (let m = buffer.readMessage(); m !== null; m = buffer.readMessage()) out.push(m);
    return out;
  };

  it("passes messages within the limit, however the chunks cut them, and skips blank lines", () => {
    const buffer = new BoundedReadBuffer(100, () => {});
    const text = '{"jsonrpc":"2.0","id":1,"result":{}}\n\n{"jsonrpc":"2.0","method":"notifications/x"}\n';
    for (let i = 0; i < text.length; i += 7) buffer.append(Buffer.from(text.slice(i, i + 7)));
    expect(read(buffer)).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", method: "notifications/x" },
    ]);
  });

  it("turns a longer line into a stand-in error for its id, whether the id comes first or last", () => {
    const buffer = new BoundedReadBuffer(100, () => {});
    const big = "x".repeat(500);
    const first = `{"jsonrpc":"2.0","id":"a-1","result":{"text":"${big}"}}`;
    buffer.append(Buffer.from(`${first}\n`));
    buffer.append(Buffer.from(`{"result":{"text":"${big}"},"jsonrpc":"2.0","id":7}\n{"jsonrpc":"2.0","id":8,"result":{}}\n`));
    const [a, b, c] = read(buffer) as { id: unknown; error?: { code: number; data: unknown } }[];
    expect(a).toMatchObject({ id: "a-1", error: { code: MESSAGE_TOO_LARGE } });
    expect(tooLarge(a!.error!.data)).toEqual({ limit: 100, bytes: first.length });
    expect(b).toMatchObject({ id: 7, error: { code: MESSAGE_TOO_LARGE } });
    expect(c).toEqual({ jsonrpc: "2.0", id: 8, result: {} });
  });

  it("reports a longer line without an id (a notification) and reads on", () => {
    const dropped: number[] = [];
    const buffer = new BoundedReadBuffer(50, (bytes) => dropped.push(bytes));
    const notification = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${"y".repeat(200)}"}}`;
    buffer.append(Buffer.from(`${notification}\n{"jsonrpc":"2.0","id":2,"result":{}}\n`));
    expect(read(buffer)).toEqual([{ jsonrpc: "2.0", id: 2, result: {} }]);
    expect(dropped).toEqual([notification.length]);
  });

  it("says what happened in words the model can act on", () => {
    expect(tooLargeMessage("fx", "big", 8 * 1024 * 1024, 20_000_070)).toBe(
      'MCP server "fx" answered "big" with 19.1 MiB, more than the 8 MiB one message may hold (tools.mcp.max_message_bytes), so the answer was dropped; ask for less at once (a narrower query, a smaller page) or do without it',
    );
    expect(idOf('{"id":3,', "")).toBe(3);
    expect(idOf("{", '"id":"x"}')).toBe("x");
    expect(idOf('{"result":{"id":3', '"z"}}')).toBeUndefined();
  });
});
