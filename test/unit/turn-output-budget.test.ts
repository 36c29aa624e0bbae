/**
 * A turn's user-visible output has a total bound: a model that calls a
 * chatty tool again and again shows the user at most
 * agents.defaults.max_turn_output_bytes of it, is told once what was left
 * out, and still gets every result itself.
 */
import { describe, expect, it } from "vitest";
import { defineTool, toolResult, z } from "../../src/index.js";
import { harness } from "../support/project.js";

const KiB = 1024;
const chatty = defineTool({
  name: "chatty",
  description: "Shows the user a big text.",
  parameters: z.object({ n: z.number() }),
  enabledByDefault: true,
  execute: ({ n }) => toolResult.user(`${n}:${"x".repeat(3 * KiB)}`),
});

describe("a turn's output to the user is bounded", () => {
  it("past max_turn_output_bytes the rest of the tools' output is not shown, the user is told once how much, the model gets all, and the history keeps only what was shown", async () => {
    const h = harness({ tools: [chatty], config: { agents: { defaults: { max_turn_output_bytes: 8 * KiB } } } });
    const script = Array.from({ length: 6 }, (_, n) => `CALL chatty {"n":${n}}`).join("\n");
    const { json } = await h.chat({ message: script, session: "big" });
    const delivered = json.delivered as { from: string; text: string }[];
    // Two outputs of 3 KiB fit 8 KiB; the other four do not.
    expect(delivered.filter((d) => d.from === "chatty").map((d) => d.text.split(":")[0])).toEqual(["0", "1"]);
    expect(delivered.filter((d) => d.from === "command")).toEqual([
      {
        from: "command",
        text: expect.stringMatching(
          /^\[4 more tool outputs of this turn \(\d+ bytes\) not shown: a turn shows at most 8192 bytes \(agents\.defaults\.max_turn_output_bytes\); the model got them all\.\]$/,
        ),
      },
    ]);
    expect(delivered.at(-1)!.from).toBe("agent");
    // The model read all six results (the built-in model's summary names each).
    expect(json.reply).toMatch(/^Ran 6 tool calls:/);
    const tools = (await h.runtime.historyOf("agent:main:http:big")).filter((m) => m.role === "tool");
    expect(tools).toHaveLength(6);
    expect(tools.filter((m) => m.role === "tool" && m.shown !== undefined)).toHaveLength(2);
  });

  it("a turn within the bound is shown whole, with no note", async () => {
    const h = harness({ tools: [chatty] });
    const { json } = await h.chat({ message: 'CALL chatty {"n":1}\nCALL chatty {"n":2}' });
    expect((json.delivered as { from: string }[]).map((d) => d.from)).toEqual(["chatty", "chatty", "agent"]);
  });
});
