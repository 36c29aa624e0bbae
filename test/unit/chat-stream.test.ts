import { describe, expect, it } from "vitest";
import { HEARTBEAT_MS } from "../../src/gateway/sse.js";
import { completionChunk } from "../support/fake-openai.js";
import { harness, jsonOf } from "../support/project.js";
import { sseReader } from "../support/sse.js";
import { ManualTimers } from "../support/timers.js";
import { testTools } from "../support/tools.js";
import { within } from "../support/wait.js";
import { WireModel, wireConfig } from "../support/wire-model.js";

/**
 * `POST /v1/chat` with `"stream": true`, driven in-process through the app:
 * the test is the client and reads (or stops reading) as it likes.
 */

const KEY = "agent:main:http:default";

function streamChat(h: ReturnType<typeof harness>, body: Record<string, unknown>): Promise<Response> {
  return h.request("/v1/chat", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, stream: true }) });
}

/** A response body read as raw text, as far as the test asks. */
function rawReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    get text() {
      return text;
    },
    /** Reads until the text holds `part`; returns all the text so far. */
    until(part: string): Promise<string> {
      const read = async () => {
        while (!text.includes(part)) {
          const chunk = await reader.read();
          if (chunk.done) throw new Error(`the stream ended before ${JSON.stringify(part)}; it said: ${text}`);
          text += decoder.decode(chunk.value, { stream: true });
        }
        return text;
      };
      return within(`${JSON.stringify(part)} on the stream`, read(), { instead: () => `it said: ${text}` });
    },
    /** Reads to the end; returns all the text. */
    rest(): Promise<string> {
      const read = async () => {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) return text;
          text += decoder.decode(chunk.value, { stream: true });
        }
      };
      return within("the stream to end", read(), { instead: () => `it said: ${text}` });
    },
  };
}

describe("POST /v1/chat streamed", () => {
  it("streams a turn in order: a non-silent tool with its text, a silent one without, a plan change, a subagent's start and end, the text, then turn.end with the JSON the call answers unstreamed, and nothing after", async () => {
    const h = harness({ config: { tools: { todo: { enabled: true } } }, tools: testTools });
    const message = [
      'CALL echo {"text":"hi"}',
      'CALL whisper {"text":"psst"}',
      'CALL todo {"action":"write","todos":[{"id":"1","content":"Outline","status":"in_progress"}]}',
      `CALL subagent ${JSON.stringify({ task: 'CALL echo {"text":"from the child"}', label: "helper" })}`,
    ].join("\n");
    const res = await streamChat(h, { message });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const stream = sseReader(res);
    const events = await stream.until("turn.end");
    await expect(stream.next()).rejects.toThrow("the stream ended");

    // The built-in model hands a watched answer over in pieces: one text.delta row here stands for the run of them.
    const rows = events.map((e) => [e.event, e.data.name ?? e.data.from ?? e.data.label ?? ""]);
    expect(rows.filter((row, i) => !(row[0] === "text.delta" && rows[i - 1]?.[0] === "text.delta"))).toEqual([
      ["turn.start", ""],
      ["tool.start", "echo"],
      ["tool.end", "echo"],
      ["delivery", "echo"],
      ["tool.start", "whisper"],
      ["tool.end", "whisper"],
      ["tool.start", "todo"],
      ["plan.updated", ""],
      ["tool.end", "todo"],
      ["tool.start", "subagent"],
      ["subagent.start", "helper"],
      ["subagent.end", "helper"],
      ["tool.end", "subagent"],
      ["text.delta", ""],
      ["delivery", "agent"],
      ["turn.end", ""],
    ]);
    const [start, echoStart, echoEnd, , , whisperEnd, , plan, , , childStart, childEnd] = events;
    expect(start!.data).toEqual({ agent: "main", session_key: KEY });
    expect(echoEnd!.data).toEqual({ id: echoStart!.data.id, name: "echo", is_error: false, text: "echo: hi" });
    expect(whisperEnd!.data).toEqual({ id: expect.any(String), name: "whisper", is_error: false });
    expect(plan!.data).toEqual({
      agent: "main",
      session_key: KEY,
      style: "list",
      plan: [{ name: "Todos", tasks: [{ content: "Outline", status: "in_progress" }] }],
    });
    expect(childStart!.data).toEqual({ id: expect.any(String), label: "helper", agent: "main" });
    expect(childEnd!.data).toEqual({ ...childStart!.data, outcome: "done", durationMs: expect.any(Number) });
    // A silent result's text, a sub-turn's own events and session keys below the session never reach the client
    // (the child's echo reaches the parent's model, whose answer quotes it).
    const wire = JSON.stringify(events);
    expect(wire).not.toContain("LEAK");
    expect(wire).not.toContain(":subagent:");
    expect(events.filter((e) => e.data.text === "echo: from the child")).toEqual([]);

    const end = events.at(-1)!.data;
    expect(events.filter((e) => e.event === "text.delta").length).toBeGreaterThan(1);
    expect(
      events
        .filter((e) => e.event === "text.delta")
        .map((e) => e.data.text)
        .join(""),
    ).toBe(end.reply);
    expect(end.delivered).toEqual(events.filter((e) => e.event === "delivery").map((e) => e.data));
    const plain = await h.chat({ message, session: "plain" });
    expect(end).toEqual({ ...plain.json, session_key: KEY });
    expect(h.runtime.stats()).toMatchObject({ watchedMessages: 0, runningTurns: 0, locks: 0, stopSwitches: 0 });
  });

  it("a slash command streams its reply and turn.end with the same JSON as unstreamed, and no turn", async () => {
    const h = harness();
    const events = await sseReader(await streamChat(h, { message: "/help" })).until("turn.end");
    const plain = await h.chat({ message: "/help" });
    expect(events).toEqual([
      { event: "delivery", data: { from: "command", text: plain.json.reply } },
      { event: "turn.end", data: plain.json },
    ]);
  });

  it("refuses a body field it does not know, or a stream flag that is not a boolean, and runs nothing", async () => {
    const h = harness();
    for (const [body, field] of [
      [{ message: "hi", stream: "yes" }, "stream"],
      [{ message: "hi", strem: true }, "strem"],
      [{ message: "hi", image: "https://example.com/cat.png" }, "image"],
    ] as const) {
      const { status, json } = await h.chat(body);
      expect(status).toBe(400);
      expect(json.error.code).toBe("invalid_request");
      expect(json.error.message).toContain(field);
    }
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("what would be refused before the turn runs is an error status, not a stream: an unknown agent, images its model cannot take", async () => {
    const h = harness();
    const ghost = await streamChat(h, { message: "hi", agent: "ghost" });
    expect(ghost.status).toBe(404);
    expect((await jsonOf(ghost)).error.code).toBe("agent_not_found");
    const image = await streamChat(h, { message: "what is this?", images: [{ url: "https://example.com/cat.png" }] });
    expect(image.status).toBe(400);
    expect((await jsonOf(image)).error.code).toBe("images_not_supported");
    expect(h.runtime.sessionKeys()).toEqual([]);
  });

  it("hands on the model's text as it arrives, and the turn's usage summed over its model calls", async () => {
    const model = new WireModel();
    const h = harness({ config: wireConfig(), tools: testTools, models: { fetch: model.fetch } });
    const stream = sseReader(await streamChat(h, { message: "go" }));
    const first = await model.call(1);
    first.text("Let me check. ");
    expect((await stream.until("text.delta")).at(-1)!.data).toEqual({ text: "Let me check. " });
    first.send(completionChunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "echo", arguments: '{"text":"x"}' } }] }));
    first.finish({ reason: "tool_calls", usage: { prompt_tokens: 10, completion_tokens: 5 } });
    expect((await stream.until("tool.end")).at(-1)!.data).toEqual({ id: "c1", name: "echo", is_error: false, text: "echo: x" });
    const second = await model.call(2);
    second.text("It ");
    expect((await stream.until("text.delta")).at(-1)!.data.text).toBe("It ");
    second.text("says x.");
    second.finish({ usage: { prompt_tokens: 20, completion_tokens: 7 } });
    const end = (await stream.until("turn.end")).at(-1)!.data;
    expect(end.reply).toBe("It says x.");
    expect(end.usage).toEqual({ input_tokens: 30, output_tokens: 12 });
    expect(stream.events.filter((e) => e.event === "text.delta").map((e) => e.data.text)).toEqual(["Let me check. ", "It ", "says x."]);
  });

  it("a model that fails mid-stream ends the stream with an error event and leaves the history as it was", async () => {
    const model = new WireModel();
    const h = harness({ config: wireConfig(), models: { fetch: model.fetch } });
    const ok = h.chat({ message: "one" });
    (await model.call(1)).text("1");
    model.calls[0]!.finish();
    expect((await ok).json.reply).toBe("1");

    const stream = sseReader(await streamChat(h, { message: "two" }));
    const failing = await model.call(2);
    failing.text("half an ans");
    await stream.until("text.delta");
    failing.send({ error: { message: "upstream died", code: 502 } });
    await stream.until("error");
    await expect(stream.next()).rejects.toThrow("the stream ended");
    const { events } = stream;
    expect(events.map((e) => e.event)).toEqual(["turn.start", "text.delta", "error"]);
    expect(events.at(-1)!.data).toEqual({ code: "model_server", message: expect.stringContaining("upstream died") });
    expect(await h.runtime.historyOf(KEY)).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
    ]);
  });

  it("a quiet stream gets a comment line each time a heartbeat interval passes with nothing written; once ended, none", async () => {
    const timers = new ManualTimers();
    const h = harness({ tools: testTools, heartbeatTimer: timers.timer });
    const raw = rawReader(await streamChat(h, { message: "CALL wait {}" }));
    const seen = (await raw.until("event: tool.start")).length;
    // The first interval saw the turn start: no comment. The second was quiet.
    expect(timers.fireAll(HEARTBEAT_MS)).toBe(1);
    expect(timers.fireAll(HEARTBEAT_MS)).toBe(1);
    expect((await raw.until(": ping")).slice(seen)).toBe(": ping\n\n");
    const stopped = await h.chat({ message: "/stop" });
    expect(stopped.json.reply).toBe("Stopped.");
    const rest = await raw.rest();
    expect(rest.endsWith("\n\n")).toBe(true);
    expect(rest.slice(rest.lastIndexOf("event: "))).toMatch(/^event: turn\.end\ndata: \{.*"stopped":true\}\n\n$/);
    expect(timers.pending(HEARTBEAT_MS)).toEqual([]);
  });

  it("a client that disconnects aborts its turn; the session's event stream still sees the turn end, and the history is unchanged", async () => {
    const h = harness({ tools: testTools });
    const watcher = sseReader(await h.request(`/v1/sessions/${KEY}/events`));
    const stream = sseReader(await streamChat(h, { message: "CALL wait {}" }));
    await stream.until("tool.start");
    await stream.close();
    const seen = await watcher.until("turn.end");
    expect(seen.map((e) => e.event)).toEqual(["turn.start", "turn.end"]);
    expect(seen.at(-1)!.data).toEqual({ agent: "main", session_key: KEY, outcome: "aborted" });
    expect(await h.runtime.historyOf(KEY)).toEqual([]);
    await h.runtime.idle();
    expect(h.runtime.stats()).toMatchObject({ watchedMessages: 0, runningTurns: 0, locks: 0, stopSwitches: 0 });
    await watcher.close();
  });

  it("a client that stops reading is cut once its stream holds gateway.limits.stream_queue_bytes, and its turn is aborted", async () => {
    const model = new WireModel();
    const h = harness({ config: wireConfig({ gateway: { limits: { stream_queue_bytes: 65_536 } } }), models: { fetch: model.fetch } });
    const res = await streamChat(h, { message: "talk" });
    const call = await model.call(1);
    // Never read: the turn's start and a text over the bound wait in the stream's queue.
    const streamed = new Promise((resolve) => h.runtime.on("text.delta", resolve));
    call.text("x".repeat(70_000));
    await within("the turn's first text delta", streamed);
    await expect(res.body!.getReader().read()).rejects.toThrow("the client stopped reading the streamed answer");
    expect(call.aborted).toBe(true);
    await h.runtime.idle();
    expect(await h.runtime.historyOf(KEY)).toEqual([]);
  });
});
