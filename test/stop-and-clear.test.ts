/**
 * What `/stop` and `/clear` mean to the client that sent the message they
 * ended, and to everything that was running for the session. In-process:
 * the built-in model, and a `hold` tool that waits on a gate the test opens.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { EventName, RuntimeEvents } from "../src/feature/events.js";
import { STOPPED_REPLY } from "../src/runtime/runtime.js";
import { defineTool, toolResult } from "../src/tools/tool.js";
import { type Harness, harness } from "./support/project.js";
import { echoTool } from "./support/tools.js";

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

/** Resolves when the runtime next emits `name` (matching `where`). */
function next<K extends EventName>(h: Harness, name: K, where: (e: RuntimeEvents[K]) => boolean = () => true): Promise<RuntimeEvents[K]> {
  return new Promise((resolve) => {
    const stop = h.runtime.on(name, (e) => {
      if (!where(e)) return;
      stop();
      resolve(e);
    });
  });
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
    expect(h.runtime.historyOf("agent:main:http:s").map((m) => m.content)).toEqual(["before", expect.stringMatching(/^You said: before/)]);
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
    expect(h.runtime.historyOf("agent:main:http:q")).toEqual([]);
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
