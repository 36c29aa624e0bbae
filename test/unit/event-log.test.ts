import { describe, expect, it } from "vitest";
import { logEvents } from "../../src/runtime/streams/event-log.js";
import { EventBus } from "../../src/port/events.js";
import { recordingLogger } from "../support/project.js";

describe("the operational log", () => {
  it("logs finished turns and failures without message text", () => {
    const events = new EventBus();
    const logger = recordingLogger();
    const stop = logEvents(events, logger);
    const scope = { agentId: "main", sessionKey: "agent:main:http:s", turnId: "t1" };
    events.emit("turn.start", { ...scope, text: "my secret message" });
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 12 });
    events.emit("turn.end", { ...scope, outcome: "error", durationMs: 3, error: 'model "gpt": HTTP 500' });
    stop();
    events.emit("turn.end", { ...scope, outcome: "done", durationMs: 1 });
    expect(logger.lines).toEqual([
      { level: "info", message: "turn" },
      { level: "warn", message: 'turn failed: model "gpt": HTTP 500' },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain("my secret message");
  });
});
