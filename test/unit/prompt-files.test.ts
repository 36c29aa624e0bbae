/**
 * The workspace's prompt files in the system prompt: after the AGENT.md
 * body, SOUL.md, USER.md, IDENTITY.md and memory/MEMORY.md in that order,
 * each headed and capped; a missing one adds nothing; a symlink out of the
 * workspace is not followed; the same text turn after turn.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { promptFilesFeature } from "../../src/features/prompt-files/feature.js";
import { builtinConfigSchema } from "../../src/house.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { Workspace } from "../../src/workspace/workspace.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { recordingLogger, tempDir } from "../support/project.js";

function setup(config: Record<string, unknown> = {}) {
  const root = path.join(tempDir(), "workspace");
  mkdirSync(path.join(root, "memory"), { recursive: true });
  const agent = { ...readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nYou are the body.").agent, workspace: root };
  const model = new ControlledModel();
  const logger = recordingLogger();
  const runtime = new Runtime({
    config: builtinConfigSchema().parse(config),
    agents: new Map([["main", agent]]),
    models: single(model),
    features: [promptFilesFeature],
    logger,
  });
  const system = async () => {
    const turn = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "hi" });
    const call = (await model.calls(model.pending.length + 1)).at(-1)!;
    call.resolve({ text: "ok" });
    await turn;
    return call.request.messages[0]!.content as string;
  };
  return { root, runtime, logger, system };
}

describe("the workspace's prompt files", () => {
  it("follow the AGENT.md body in a fixed order, each headed; a missing one adds nothing; the text is the same next turn", async () => {
    const { root, runtime, system } = setup();
    writeFileSync(path.join(root, "USER.md"), "The user likes tea.\n");
    writeFileSync(path.join(root, "SOUL.md"), "Be kind.\n");
    writeFileSync(path.join(root, "memory", "MEMORY.md"), "- met on Monday\n");
    const first = await system();
    expect(first).toBe("You are the body.\n\n## SOUL.md\n\nBe kind.\n\n## USER.md\n\nThe user likes tea.\n\n# Memory\n\n- met on Monday");
    expect(await system()).toBe(first);
    writeFileSync(path.join(root, "IDENTITY.md"), "Name: Pico");
    expect(await system()).toContain("## USER.md\n\nThe user likes tea.\n\n## IDENTITY.md\n\nName: Pico\n\n# Memory");
    await runtime.close();
  });

  it("a file over max_bytes is cut at a line, saying so; a symlink out of the workspace is left out with a warning", async () => {
    const { root, runtime, logger, system } = setup({ agents: { defaults: { prompt_files: { max_bytes: 256 } } } });
    writeFileSync(path.join(root, "SOUL.md"), Array.from({ length: 100 }, (_, i) => `rule ${i}`).join("\n"));
    const outside = path.join(path.dirname(root), "elsewhere.md");
    writeFileSync(outside, "not for the model");
    symlinkSync(outside, path.join(root, "USER.md"));
    const text = await system();
    expect(text).toMatch(
      /^You are the body\.\n\n## SOUL\.md\n\nrule 0\nrule 1\n[\s\S]*\nrule \d+\n\[SOUL\.md was cut here: it is \d+ bytes, over agents\.defaults\.prompt_files\.max_bytes \(256\)\.\]$/,
    );
    expect(text).not.toContain("not for the model");
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes('prompt section "USER.md"') && l.message.includes("symlink"))).toBe(true);
    await runtime.close();
  });

  it("missing files are looked for once, not every turn, in a workspace made a moment ago; one written later shows next turn", async () => {
    const { root, runtime, system } = setup();
    // The workspace and its memory/ folder were just made, and a tool writes beside the prompt files.
    writeFileSync(path.join(root, "notes.md"), "a tool's file");
    const reads = vi.spyOn(Workspace.prototype, "readStart");
    try {
      expect(await system()).toBe("You are the body.");
      expect(await system()).toBe("You are the body.");
      expect(await system()).toBe("You are the body.");
      expect(reads.mock.calls.map(([name]) => name)).toEqual(["SOUL.md", "USER.md", "IDENTITY.md", "memory/MEMORY.md"]);
      writeFileSync(path.join(root, "USER.md"), "The user likes tea.");
      expect(await system()).toBe("You are the body.\n\n## USER.md\n\nThe user likes tea.");
    } finally {
      reads.mockRestore();
      await runtime.close();
    }
  });

  it("prompt_files.enabled false adds none of them", async () => {
    const { root, runtime, system } = setup({ agents: { defaults: { prompt_files: { enabled: false } } } });
    writeFileSync(path.join(root, "SOUL.md"), "Be kind.");
    expect(await system()).toBe("You are the body.");
    await runtime.close();
  });
});
