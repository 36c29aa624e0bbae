/**
 * What the gateway makes in the background once it listens, so the first
 * turn does not (Runtime.warm): each agent's tools as the model is shown
 * them, and each model's answer reader, once per model; a model that cannot
 * be made is left to its turn.
 */
import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel } from "../support/controlled-model.js";
import { recordingLogger } from "../support/project.js";

class WarmedModel extends ControlledModel {
  warmed = 0;
  async warm(): Promise<void> {
    this.warmed++;
  }
}

const agent = (id: string, model?: string) => ({
  ...readAgent(id, `agents/${id}/AGENT.md`, `---\nname: ${id}\n${model ? `model: ${model}\n` : ""}---\nYou help.`).agent,
});

describe("warming up after start", () => {
  it("each model the agents use is warmed once; a model that cannot be made is skipped, not thrown", async () => {
    const shared = new WarmedModel("shared");
    const own = new WarmedModel("own");
    const asked: string[] = [];
    const runtime = new Runtime({
      config: builtinConfigSchema().parse({}),
      agents: new Map([
        ["main", agent("main")],
        ["second", agent("second")],
        ["third", agent("third", "own")],
        ["broken", agent("broken", "missing")],
      ]),
      models: {
        get: (name: string) => {
          asked.push(name);
          if (name === "missing") throw new Error("model_list has no missing");
          return name === "own" ? own : shared;
        },
      },
      logger: recordingLogger(),
    });
    await runtime.warm();
    expect([shared.warmed, own.warmed]).toEqual([1, 1]);
    expect(asked).toHaveLength(3);
    await runtime.close();
  });
});
