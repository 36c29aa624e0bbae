/**
 * What `/stop` and `/clear` mean to the client that sent the message they
 * ended, and to everything that was running for the session. In-process:
 * the built-in model, and a `hold` tool that waits on a gate the test opens.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { EventName, RuntimeEvents } from "../../src/port/events.js";
import { STOPPED_REPLY } from "../../src/runtime/options.js";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { type Harness, harness, jsonOf } from "../support/project.js";
import { sseReader } from "../support/sse.js";
import { echoTool } from "../support/tools.js";
import { waitFor, within } from "../support/wait.js";

const gates = new Map<string, { opened: Promise<void>; open: () => void }>();

function gate(name: string) {
  let found = gates.get(name);
  if (!found) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.set(name, (found = { opened, open }));
  }
  return found;
}

/** Waits until the test opens its gate (or the call is aborted). */
const holdTool = defineTool({
  name: "hold",
  description: "Waits for a gate.",
  parameters: z.object({ gate: z.string() }),
  enabledByDefault: true,
  timeoutMs: 0,
  execute: async (args, ctx) => {
    await new Promise<void>((resolve, reject) => {
      ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
      void gate(args.gate).opened.then(resolve);
    });
    return toolResult.text(`passed ${args.gate}`);
  },
});

const hold = (name: string) => `CALL hold ${JSON.stringify({ gate: name })}`;

function gateway(config: Record<string, unknown> = {}): Harness {
  return harness({ tools: [holdTool, echoTool], config });
}

function record<K extends EventName>(h: Harness, name: K): RuntimeEvents[K][] {
  const seen: RuntimeEvents[K][] = [];
  h.runtime.on(name, (e) => seen.push(e));
  return seen;
}

const spawn = (task: string, label = "bg") => `CALL spawn ${JSON.stringify({ task, label })}`;
const subagent = (task: string) => `CALL subagent ${JSON.stringify({ task })}`;

/**
 * Lets everything that can happen now happen: these turns run on promises
 * only (the built-in model, in-memory stores), so a few turns of the event
 * loop drain them, however fast or slow the machine.
 */
async function settled(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Resolves when the runtime next emits `name` (matching `where`); fails, naming the event, if it does not. */
function next<K extends EventName>(h: Harness, name: K, where?: (e: RuntimeEvents[K]) => boolean): Promise<RuntimeEvents[K]> {
  const emitted = new Promise<RuntimeEvents[K]>((resolve) => {
    const stop = h.runtime.on(name, (e) => {
      if (where && !where(e)) return;
      stop();
      resolve(e);
    });
  });
  return within(`the runtime's next "${name}" event${where ? ` where ${where}` : ""}`, emitted);
}

describe("/stop", () => {
  it("the request whose turn it ended answers 200 with stopped: true and a reply saying so; history is unchanged", async () => {
    const h = gateway();
    await h.chat({ message: "before", session: "s" });
    const holding = next(h, "tool.start", (e) => e.tool === "hold");
    const turn = h.chat({ message: `CALL echo {"text":"seen"}\n${hold("stop-1")}`, session: "s" });
    await holding;
    const stop = await h.chat({ message: "/stop", session: "s" });
    expect(stop.json.reply).toBe("Stopped.");
    const { status, json } = await turn;
    expect(status).toBe(200);
    expect(json).toEqual({
      agent: "main",
      session_key: "agent:main:http:s",
      reply: STOPPED_REPLY,
      delivered: [
        { from: "echo", text: "echo: seen" },
        { from: "command", text: STOPPED_REPLY },
      ],
      stopped: true,
    });
    expect(json.reply).toMatch(/^Stopped by \/stop/);
    expect((await h.runtime.historyOf("agent:main:http:s")).map((m) => m.content)).toEqual(["before", expect.stringMatching(/^You said: before/)]);
    expect((await h.chat({ message: "after", session: "s" })).json.stopped).toBeUndefined();
  });

  it("a message queued behind the stopped turn is stopped too, and answered the same way", async () => {
    const h = gateway();
    const holding = next(h, "tool.start");
    const first = h.chat({ message: hold("stop-2"), session: "q" });
    await holding;
    const queued = h.chat({ message: "queued", session: "q" });
    await h.chat({ message: "/stop", session: "q" });
    for (const answer of await Promise.all([first, queued])) {
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ stopped: true, reply: STOPPED_REPLY });
    }
    expect(await h.runtime.historyOf("agent:main:http:q")).toEqual([]);
  });

  it("a turn aborted by shutdown is still 503 aborted", async () => {
    const h = gateway();
    const holding = next(h, "tool.start");
    const turn = h.chat({ message: hold("never-opened"), session: "down" });
    await holding;
    await h.runtime.close(0);
    const { status, json } = await turn;
    expect(status).toBe(503);
    expect(json.error.code).toBe("aborted");
    expect(json.stopped).toBeUndefined();
  });
});

describe("/clear", () => {
  it("stops a running spawned child: no answer turn, nothing delivered later, no history; the stream sees the child end", async () => {
    const h = gateway({ tools: { subagent: { keep_history: true } } });
    const turns = record(h, "turn.start");
    const ends = record(h, "subagent.end");
    const stream = sseReader(await h.request("/v1/sessions/agent:main:http:c/events"));
    // A finished child whose history is kept, and a spawned one that is still running (its own child finished).
    await h.chat({ message: subagent('CALL echo {"text":"kept"}'), session: "c" });
    const holding = next(h, "tool.start", (e) => e.tool === "hold");
    await h.chat({ message: spawn(`${subagent('CALL echo {"text":"grandchild"}')}\n${hold("clear-a")}`), session: "c" });
    await holding;
    expect(h.runtime.sessionKeys()).toHaveLength(3); // the session, the finished child's, the grandchild's

    const cleared = await h.chat({ message: "/clear", session: "c" });
    expect(cleared.json.reply).toBe("Cleared: this session's history, plan and undelivered messages are gone, and 1 running subagent was stopped.");
    expect(cleared.json.delivered).toEqual([{ from: "command", text: cleared.json.reply }]);
    expect(ends.at(-1)).toMatchObject({ label: "bg", outcome: "aborted" });
    let end = await stream.next();
    while (!(end.event === "subagent.end" && end.data.label === "bg")) end = await stream.next();
    expect(end.data).toMatchObject({ outcome: "aborted" });
    expect(await stream.next()).toEqual({ event: "delivery", data: { from: "command", text: cleared.json.reply } });

    gate("clear-a").open();
    await h.runtime.idle();
    await settled();
    expect(turns.filter((t) => t.sessionKey === "agent:main:http:c")).toHaveLength(2);
    expect(h.runtime.sessionKeys()).toEqual([]);
    expect(await jsonOf(await h.request("/v1/sessions/agent:main:http:c/history"))).toEqual({ messages: [], total: 0 });
    const after = await h.chat({ message: "after", session: "c" });
    expect(after.json.delivered).toEqual([{ from: "agent", text: after.json.reply }]);
    expect(stream.events.filter((e) => e.event === "delivery").map((e) => e.data.text)).toEqual([
      expect.stringContaining("echo: kept"),
      expect.stringContaining("Started subagent"),
      cleared.json.reply,
      after.json.reply,
    ]);
    expect((await h.runtime.historyOf("agent:main:http:c")).map((m) => m.content)).toEqual(["after", after.json.reply]);
    await stream.close();
  });

  it("drops the deliveries kept for the session: neither /clear's answer nor the next one carries them", async () => {
    const h = gateway();
    await h.chat({ message: spawn('CALL echo {"text":"late"}'), session: "k" });
    await h.runtime.idle();
    const cleared = await h.chat({ message: "/clear", session: "k" });
    expect(cleared.json.delivered).toEqual([{ from: "command", text: "Cleared: this session's history, plan and undelivered messages are gone." }]);
    const next = await h.chat({ message: "next", session: "k" });
    expect(next.json.delivered).toEqual([{ from: "agent", text: next.json.reply }]);
    const stream = sseReader(await h.request("/v1/sessions/agent:main:http:k/events"));
    await h.chat({ message: "watched", session: "k" });
    expect((await stream.until("delivery")).at(-1)!.data.text).toMatch(/^You said: watched/);
    await stream.close();
  });

  it("a result that arrived before the clear, whose answer waits for the session lock, is never answered", async () => {
    const h = gateway();
    const turns = record(h, "turn.start");
    const ends = record(h, "subagent.end");
    const holding = next(h, "tool.start", (e) => e.tool === "hold" && e.sessionKey === "agent:main:http:r");
    // The parent's turn holds the session while its spawned child finishes.
    const parent = h.chat({ message: `${spawn(hold("race-child"))}\n${hold("race-parent")}`, session: "r" });
    await holding;
    const clear = h.chat({ message: "/clear", session: "r" });
    gate("race-child").open();
    await waitFor("the spawned child to end", () => ends.length > 0);
    await settled();
    expect(ends.map((e) => e.outcome)).toEqual(["done"]);
    gate("race-parent").open();
    expect((await parent).status).toBe(200);
    const cleared = await clear;
    expect(cleared.json.delivered).toEqual([{ from: "command", text: cleared.json.reply }]);
    await h.runtime.idle();
    expect(turns.filter((t) => t.sessionKey === "agent:main:http:r")).toHaveLength(1);
    expect(await h.runtime.historyOf("agent:main:http:r")).toEqual([]);
    expect((await h.chat({ message: "next", session: "r" })).json.delivered).toHaveLength(1);
  });

  it("stops the children of a child, and the clear waits until every one has ended", async () => {
    const h = gateway();
    const starts = record(h, "subagent.start");
    const ends = record(h, "subagent.end");
    const holding = next(h, "tool.start", (e) => e.tool === "hold");
    await h.chat({ message: spawn(subagent(hold("deep"))), session: "d" });
    await holding;
    expect(starts).toHaveLength(2);
    const cleared = await h.chat({ message: "/clear", session: "d" });
    expect(cleared.json.reply).toMatch(/2 running subagents were stopped\.$/);
    expect(ends.map((e) => e.outcome)).toEqual(["aborted", "aborted"]);
    expect(h.runtime.stats()).toMatchObject({ runningTurns: 0, sessions: 0, stopSwitches: 0 });
  });
});
