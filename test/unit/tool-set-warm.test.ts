/**
 * The tool specs made ahead of the first turn (ToolSet.warm, run by the
 * gateway just after it listens) are made one tool at a time, each in a turn
 * of the event loop of its own: a request that comes meanwhile (a health
 * check just after start) is answered before the rest are made.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolSet } from "../../src/tools/tool-set.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";

const tool = (name: string) =>
  defineTool({
    name,
    description: `Tool ${name}.`,
    parameters: z.object({ what: z.string().describe(`what ${name} does`) }),
    enabledByDefault: true,
    execute: () => toolResult.text("ok"),
  });

describe("tool specs made ahead of the first turn", () => {
  it("a request that comes while the specs are made is answered before they are all made, and the specs are the first call's", async () => {
    const set = new ToolSet(["a", "b", "c", "d"].map(tool));
    let warmed = false;
    const warming = set.warm().then(() => {
      warmed = true;
    });
    // What an incoming request would run: a callback of the event loop's next turn.
    await nextTurn();
    expect(warmed).toBe(false);
    await warming;
    const specs = set.specs();
    expect(specs.map((s) => s.name)).toEqual(["a", "b", "c", "d"]);
    expect(specs[0]!.parameters).toMatchObject({ type: "object", properties: { what: { type: "string", description: "what a does" } } });
    // Made once: the same array for every turn, and warming again makes nothing new.
    await set.warm();
    expect(set.specs()).toBe(specs);
  });
});
