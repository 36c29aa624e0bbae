import { describe, expect, it } from "vitest";
import { logEvents } from "../src/runtime/event-log.js";
import { EventBus } from "../src/runtime/events.js";
import { recordingLogger } from "./support/project.js";

describe("the operational log", () => {
  it("logs finished turns, failures and subagents without message text", () => {
    const events = new EventBus();
    const logger = recordingLogger();
    const stop = logEvents(events, logger);
    const scope = { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1" };
    events.emit("turn.start", { ...scope, text: "my secret message" });
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 12 });
    events.emit("turn.end", { ...scope, outcome: "error", durationMs: 3, error: 'model "gpt": HTTP 500' });
    events.emit("subagent.end", { agentId: "main", sessionKey: "k:subagent:c", parentKey: "k", childKey: "k:subagent:c", label: "job", outcome: "timeout", durationMs: 9 });
    stop();
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 1 });
    expect(logger.lines).toEqual([
      { level: "info", message: "turn" },
      { level: "warn", message: 'turn failed: model "gpt": HTTP 500' },
      { level: "info", message: "subagent" },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain("my secret message");
  });
});
