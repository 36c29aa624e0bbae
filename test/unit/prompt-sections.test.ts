/**
 * Features' sections of the system prompt: after the AGENT.md body, in the
 * order of the features, each within its bound (cut at a line, saying so);
 * one that fails is left out of that turn, with a warning, and the turn
 * goes on; a bound past the most a section may take stops start-up.
 */
import { describe, expect, it } from "vitest";
import { readAgent } from "../../src/agents/catalog.js";
import { builtinConfigSchema } from "../../src/house.js";
import type { Feature } from "../../src/port/feature.js";
import { MAX_SECTION_BYTES, type PromptSection } from "../../src/port/prompt.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { ControlledModel, single } from "../support/controlled-model.js";
import { recordingLogger } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { waitFor } from "../support/wait.js";

const section = (name: string, maxBytes: number, text: PromptSection["text"]): Feature => ({
  name,
  setup: () => ({ prompt: [{ name, maxBytes, text }] }),
});

function runtimeWith(features: Feature[], turnTimer?: ManualTimers) {
  const model = new ControlledModel();
  const logger = recordingLogger();
  const runtime = new Runtime({
    ...(turnTimer ? { turnTimer: turnTimer.timer } : {}),
    config: builtinConfigSchema().parse({}),
    agents: new Map([["main", readAgent("main", "agents/main/AGENT.md", "---\nname: Main\n---\nYou are the body.").agent]]),
    models: single(model),
    features,
    logger,
  });
  /** Sends a message and answers its one model call; resolves with the system prompt that call carried. */
  const systemOfTurn = async (text: string) => {
    const turn = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text });
    const call = (await model.calls(model.pending.length + 1)).at(-1)!;
    call.resolve({ text: "ok" });
    await turn;
    const system = call.request.messages[0]!;
    expect(system.role).toBe("system");
    return system.content as string;
  };
  return { runtime, logger, systemOfTurn };
}

describe("prompt sections", () => {
  it("come after the AGENT.md body in the features' order; one over its bound is cut at a line with a note; the text is the same next turn", async () => {
    const long = Array.from({ length: 40 }, (_, i) => `line ${i} of the memory`).join("\n");
    const { runtime, systemOfTurn } = runtimeWith([
      section("skills", 100, () => "Skills: none yet."),
      section("empty", 100, () => "  "),
      section("memory", 120, () => long),
    ]);
    const text = await systemOfTurn("hello");
    expect(text.startsWith("You are the body.\n\nSkills: none yet.\n\nline 0 of the memory\nline 1 of the memory\n")).toBe(true);
    const memory = text.slice(text.indexOf("line 0"));
    expect(memory.endsWith("\n[The memory section was cut: it is over 120 bytes.]")).toBe(true);
    expect(Buffer.byteLength(memory, "utf8")).toBeLessThanOrEqual(120);
    expect(
      memory
        .split("\n")
        .slice(0, -1)
        .every((line) => /^line \d+ of the memory$/.test(line)),
    ).toBe(true);
    expect(await systemOfTurn("again")).toBe(text);
    await runtime.close();
  });

  it("a section that fails is left out of that turn with a warning; the turn is answered", async () => {
    const broken = section("broken", 100, () => {
      throw new Error("disk gone");
    });
    const { runtime, logger, systemOfTurn } = runtimeWith([broken, section("after", 100, () => "After it.")]);
    expect(await systemOfTurn("hello")).toBe("You are the body.\n\nAfter it.");
    expect(logger.lines).toContainEqual({ level: "warn", message: 'prompt section "broken" failed for agent:main:http:s, left out of this turn: disk gone' });
    await runtime.close();
  });

  it("sections are read side by side: a slow one does not hold back the next one's read, and the order stays the features'", async () => {
    let release: (() => void) | undefined;
    const order: string[] = [];
    const slow = section("slow", 100, async () => {
      order.push("slow asked");
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return "Slow part.";
    });
    const quick = section("quick", 100, () => {
      order.push("quick asked");
      return "Quick part.";
    });
    const { runtime, systemOfTurn } = runtimeWith([slow, quick]);
    const system = systemOfTurn("hello");
    await waitFor("both sections to be asked", () => order.length === 2);
    expect(order).toEqual(["slow asked", "quick asked"]);
    release!();
    expect(await system).toBe("You are the body.\n\nSlow part.\n\nQuick part.");
    await runtime.close();
  });

  it("a section that never answers is ended by the turn's deadline, like the rest of the turn", async () => {
    const timers = new ManualTimers();
    let asked: AbortSignal | undefined;
    const hanging = section("hanging", 100, ({ signal }) => {
      asked = signal;
      return new Promise<string>(() => {});
    });
    const { runtime } = runtimeWith([hanging], timers);
    const turn = runtime.handleMessage({ agentId: "main", channel: "http", chatId: "s", text: "hello" });
    await waitFor("the section to be asked for its text", () => asked !== undefined);
    expect(timers.fireAll(900_000)).toBe(1);
    await expect(turn).rejects.toMatchObject({ code: "turn_timeout" });
    expect(asked!.aborted).toBe(true);
    expect(runtime.stats().locks).toBe(0);
    await runtime.close();
  });

  it("a bound past the most a section may take stops start-up, naming the feature and the section", () => {
    expect(() => runtimeWith([section("huge", MAX_SECTION_BYTES + 1, () => "x")])).toThrow(
      `feature "huge": prompt section "huge": maxBytes must be a whole number from 1 to ${MAX_SECTION_BYTES}`,
    );
  });
});
