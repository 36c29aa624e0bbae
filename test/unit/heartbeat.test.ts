/**
 * The heartbeat on the runtime's timer, moved by the test (no waiting on a
 * clock): an empty HEARTBEAT.md (or only headings, comments, PicoClaw's
 * template) makes no model call over several intervals; one with a task
 * makes one per interval, in the heartbeat session, which keeps the last
 * check only; its answer reaches `deliver_to`'s chat; it starts only when
 * the gateway listens and stops with it. PicoClaw's `interval` is read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { heartbeatFromPicoclaw } from "../../src/features/heartbeat/config.js";
import { NOTHING_TO_TELL, TASK_MARKER, heartbeatTasks } from "../../src/features/heartbeat/tasks.js";
import { harness } from "../support/project.js";
import { ManualTimers } from "../support/timers.js";
import { waitFor } from "../support/wait.js";

const MINUTE = 60_000;

function gateway(heartbeat: Record<string, unknown>, file?: string) {
  const timers = new ManualTimers();
  const h = harness({ timer: timers.timer, config: { heartbeat: { enabled: true, interval_minutes: 1, ...heartbeat } } });
  const workspace = path.join(h.dir, "workspace");
  mkdirSync(workspace, { recursive: true });
  if (file !== undefined) writeFileSync(path.join(workspace, "HEARTBEAT.md"), file);
  const requests: string[] = [];
  h.runtime.on("llm.request", (e) => requests.push(e.sessionKey));
  const ended: string[] = [];
  h.runtime.on("turn.end", (e) => ended.push(e.sessionKey));
  /** Runs the heartbeat's pending timer out, and waits until the check it starts is over (the next one is armed). */
  const tick = async () => {
    const armed = timers.started.length;
    expect(timers.fireAll(MINUTE)).toBe(1);
    await waitFor("the next heartbeat to be armed", () => timers.started.length > armed && timers.pending(MINUTE).length === 1);
  };
  return { h, timers, workspace, requests, ended, tick };
}

const KEY = "agent:main:heartbeat:default";

describe("the heartbeat", () => {
  it("an empty HEARTBEAT.md, or one with headings, comments and PicoClaw's template only, makes no model call over several intervals", async () => {
    const { h, requests, tick, workspace } = gateway({}, "");
    await h.runtime.start();
    await tick();
    await tick();
    writeFileSync(path.join(workspace, "HEARTBEAT.md"), `# Heartbeat\n\n<!-- nothing yet -->\n\n${TASK_MARKER}\n\n## later\n`);
    await tick();
    expect(requests).toEqual([]);
  });

  it("a task makes one turn per interval in the heartbeat session, which keeps the last check only", async () => {
    const { h, requests, ended, tick } = gateway({}, `${TASK_MARKER}\n- water the plants\n`);
    await h.runtime.start();
    await tick();
    await tick();
    await tick();
    expect(ended).toEqual([KEY, KEY, KEY]);
    expect(requests).toEqual([KEY, KEY, KEY]);
    const history = await h.runtime.historyOf(KEY);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(history[0]!.content).toMatch(/^# Heartbeat Check\n\nCurrent time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n/);
    expect(history[0]!.content).toMatch(/## Tasks \(HEARTBEAT\.md\)\n\n- water the plants$/);
  });

  it("its answer goes to deliver_to's chat", async () => {
    const { h, tick } = gateway({ deliver_to: "http:alice" }, "- check the mail\n");
    await h.runtime.start();
    await tick();
    const kept = await h.runtime.takeDeliveries("agent:main:http:alice");
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ from: "heartbeat" });
    expect(kept[0]!.text).toContain("check the mail");
  });

  it("waits for the gateway to listen, and stops with it; off by default", async () => {
    const { h, timers } = gateway({}, "- a task\n");
    expect(timers.pending(MINUTE)).toHaveLength(0);
    await h.runtime.start();
    expect(timers.pending(MINUTE)).toHaveLength(1);
    await h.runtime.close(0);
    expect(timers.pending(MINUTE)).toHaveLength(0);
    const off = new ManualTimers();
    const quiet = harness({ timer: off.timer });
    await quiet.runtime.start();
    expect(off.pending(MINUTE)).toHaveLength(0);
  });

  it("refuses an agent that does not exist, and a deliver_to that is not a chat, naming the key", () => {
    expect(() => harness({ config: { heartbeat: { enabled: true, agent: "ghost" } } })).toThrow(/heartbeat\.agent: there is no agent "ghost"/);
    expect(() => harness({ config: { heartbeat: { deliver_to: "nowhere" } } })).toThrow(/heartbeat\.deliver_to/);
    expect(() => harness({ config: { heartbeat: { interval_minutes: 0 } } })).toThrow(/heartbeat\.interval_minutes/);
  });
});

describe("HEARTBEAT.md, as PicoClaw reads it", () => {
  it("counts only what follows the marker when there is one; blank lines, headings and comments are no task", () => {
    expect(heartbeatTasks("")).toBeUndefined();
    expect(heartbeatTasks("# Title\n\n<!-- a\nmulti-line comment -->\n")).toBeUndefined();
    expect(heartbeatTasks(`Read this first.\n${TASK_MARKER}\n\n# none\n`)).toBeUndefined();
    expect(heartbeatTasks(`Read this first.\n${TASK_MARKER}\n- one\n  - two\n`)).toBe("- one\n  - two");
    expect(heartbeatTasks("- no marker, a task\n")).toBe("- no marker, a task");
    expect(NOTHING_TO_TELL.test(" HEARTBEAT_OK\n")).toBe(true);
    expect(NOTHING_TO_TELL.test("HEARTBEAT_OK, and also...")).toBe(false);
  });

  it("PicoClaw's interval is minutes: 0 is 30, 1 to 4 are 5", () => {
    expect(heartbeatFromPicoclaw({ enabled: true, interval: 0 })).toEqual({ enabled: true, interval_minutes: 30 });
    expect(heartbeatFromPicoclaw({ enabled: true, interval: 2 })).toEqual({ enabled: true, interval_minutes: 5 });
    expect(heartbeatFromPicoclaw({ interval: 45 })).toEqual({ interval_minutes: 45 });
  });
});
