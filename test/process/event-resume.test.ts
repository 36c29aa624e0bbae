/**
 * Resuming a session's event stream (`Last-Event-ID`) against the real
 * gateway process (`node dist/main.js gateway`, store jsonl): a client whose
 * connection went while a spawned subagent's result was on its way gets it
 * when it comes back, and the result is in the session's history.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createParser } from "eventsource-parser";
import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, openaiConfig, writeProject } from "../support/project.js";
import { call, openGate, useScriptedModel } from "../support/scripted-openai.js";
import { type SseEvent, sseReader } from "../support/sse.js";
import { eventually, within } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const model = useScriptedModel();

async function gateway(): Promise<string> {
  const project = writeProject({ config: openaiConfig(model.server.url, { stream: false }) });
  const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
    cwd: project,
    env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await eventually(() => expect(output).toMatch(/listening on http:\/\/\S+/));
  return /listening on (http:\/\/\S+)/.exec(output)![1]!;
}

const chat = async (url: string, message: string, session: string) => {
  const res = await fetch(`${url}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session }) });
  return { status: res.status, json: await jsonOf(res) };
};
const eventsUrl = (url: string, session: string) => `${url}/v1/sessions/agent:main:http:${session}/events`;
const historyOf = async (url: string, session: string) =>
  (await jsonOf(await fetch(`${url}/v1/sessions/agent:main:http:${session}/history`))).messages as { role: string; content: string }[];

describe("resuming an event stream on the gateway process", () => {
  it("an /events reader that goes away does not lose a spawned result: it is in the history, and the stream resumed from its last id gets it, once", {
    timeout: 60_000,
  }, async () => {
    const url = await gateway();
    const res = await fetch(eventsUrl(url, "gone"));
    // A client that reads by hand: up to the subagent's start, then no more (the bytes that follow may reach its socket, unread).
    const reader = res.body!.getReader();
    const got: (SseEvent & { id?: string })[] = [];
    const parser = createParser({ onEvent: (e) => got.push({ event: e.event ?? "message", data: JSON.parse(e.data), id: e.id }) });
    const decoder = new TextDecoder();
    const started = chat(url, [call("spawn", { task: "WAIT resume-bg\nSAY the background answer", label: "bg" }), "SAY started it"].join("\n"), "gone");
    await within(
      "the subagent's start on the stream",
      (async () => {
        while (!got.some((e) => e.event === "subagent.start")) {
          const chunk = await reader.read();
          if (chunk.done) throw new Error("the stream ended");
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
      })(),
    );
    const lastRead = got.findLast((e) => e.id !== undefined)!.id!;
    expect((await started).json.reply).toBe("started it");
    openGate("resume-bg");
    // The parent's answer to the result is stored in the session's history (with the note it answered)...
    await eventually(async () => expect((await historyOf(url, "gone")).at(-1)).toEqual({ role: "assistant", content: "the background answer" }));
    expect((await historyOf(url, "gone")).findLast((m) => m.role === "user")!.content).toMatch(/^\[System note: background subagent "bg"/);
    // ...and the client goes away without reading what was sent to it meanwhile.
    await reader.cancel();
    const back = sseReader(await fetch(eventsUrl(url, "gone"), { headers: { "last-event-id": lastRead } }));
    const seen = await back.until("turn.end");
    const again = await (async () => {
      const rest: SseEvent[] = [...seen];
      while (!rest.some((e) => e.event === "delivery" && e.data.text === "the background answer")) rest.push(await back.next());
      return rest;
    })();
    expect(again.filter((e) => e.event === "delivery" && e.data.text === "the background answer")).toHaveLength(1);
    expect(back.ids.every((id) => id !== undefined && BigInt(id) > BigInt(lastRead))).toBe(true);
    await back.close();
    // Handed out once: the next chat response does not carry it again.
    expect((await chat(url, "SAY next", "gone")).json.delivered).toEqual([{ from: "agent", text: "next" }]);
  });

  it("a stream resumed with Last-Event-ID gets the events of a turn that ran while it was away, after that id only", { timeout: 60_000 }, async () => {
    const url = await gateway();
    const first = sseReader(await fetch(eventsUrl(url, "away")));
    await chat(url, "SAY one", "away");
    await first.until("turn.end");
    const last = first.lastId!;
    await first.close();
    await chat(url, "SAY two", "away");
    const back = sseReader(await fetch(eventsUrl(url, "away"), { headers: { "last-event-id": last } }));
    const seen = await back.until("turn.end");
    expect(seen.map((e) => e.event)).toEqual(["turn.start", "delivery", "turn.end"]);
    expect(seen[1]!.data).toEqual({ from: "agent", text: "two" });
    await back.close();
    const bad = await fetch(eventsUrl(url, "away"), { headers: { "last-event-id": "not-an-id" } });
    expect(bad.status).toBe(400);
    expect((await jsonOf(bad)).error.message).toContain("Last-Event-ID");
  });
});
