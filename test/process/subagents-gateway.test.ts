import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/tools/tool.js";
import type { RuntimeEvents } from "../../src/port/events.js";
import type { Timer } from "../../src/signals.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf, openaiConfig } from "../support/project.js";
import { call, openGate, useScriptedModel } from "../support/scripted-openai.js";
import { sseReader } from "../support/sse.js";
import { ManualTimers } from "../support/timers.js";
import { eventually, waitFor } from "../support/wait.js";

const model = useScriptedModel();

const AGENTS = {
  main: "---\nname: Main\nallow_agents: [researcher]\n---\nYou coordinate.",
  researcher: "---\nname: Researcher\n---\nYou research.",
  narrow: "---\nname: Narrow\ntools: [subagent]\n---\nYou have no plan tool.",
};

type Config = { subturn?: Record<string, unknown>; tools?: Record<string, unknown> };

function gateway(extra: Config = {}, timer?: Timer): Harness {
  const base = openaiConfig(model.server.url) as { agents: { defaults: Record<string, unknown> } };
  return harness({
    ...(timer ? { timer } : {}),
    agents: AGENTS,
    config: {
      ...base,
      agents: { defaults: { ...base.agents.defaults, subturn: extra.subturn ?? {} } },
      tools: { todo: { enabled: true }, ...DEFAULT_TOOLS_OFF, ...extra.tools },
    },
  });
}

function record<K extends keyof RuntimeEvents>(h: Harness, name: K): RuntimeEvents[K][] {
  const seen: RuntimeEvents[K][] = [];
  h.runtime.on(name, (e) => seen.push(e));
  return seen;
}

/** The requests a child sent to the model (its first user message carries the gateway's context line). */
function childRequests(task: string) {
  return model.server.requests.filter((r) =>
    (r.body.messages as { role: string; content: string }[]).some((m) => m.role === "user" && m.content.startsWith("[A task from") && m.content.endsWith(task)),
  );
}

const toolResults = (request: { body: { messages: { role: string; content: string }[] } }) =>
  request.body.messages.filter((m) => m.role === "tool").map((m) => m.content);

const writePlan = (id: string, content: string) => call("todo", { action: "write", todos: [{ id, content }] });

describe("subagent", () => {
  it("a child reads an empty plan, writes its own, finishes; the parent's plan is unchanged and the child's is released", async () => {
    const h = gateway();
    const ends = record(h, "subagent.end");
    const childTask = [call("todo", { action: "read" }), writePlan("c1", "child step"), "SAY child finished: ok"].join("\n");
    const { status, json } = await h.chat({
      message: [writePlan("p1", "parent step"), call("subagent", { task: childTask, label: "kid" }), call("todo", { action: "read" })].join("\n"),
      session: "plans",
    });
    expect(status).toBe(200);
    const [childFirst, childSecond] = childRequests(childTask).slice(-3);
    expect(toolResults(childSecond!)[0]).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
    expect(childFirst!.body.messages.filter((m: { role: string }) => m.role === "user")).toHaveLength(1);
    expect(childFirst!.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
    const [write, sub, read] = json.reply.replace(/^done: /, "").split(" | ");
    expect(JSON.parse(write).message).toBe("Updated 1 todos");
    expect(sub).toContain("child finished: ok");
    expect(sub).toContain('"kid"');
    expect(JSON.parse(read).todos).toEqual([{ id: "p1", content: "parent step", status: "pending", priority: "medium" }]);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ outcome: "done", label: "kid", parentKey: "agent:main:http:plans", agentId: "main" });
    expect(ends[0]!.childKey).toMatch(/^agent:main:http:plans:subagent:[A-Za-z0-9_-]+$/);
    expect(h.plans.size).toBe(1);
    expect(await h.runtime.historyOf(ends[0]!.childKey)).toEqual([]);
    expect(h.logger.lines).toContainEqual({ level: "info", message: "subagent" });
    expect(json.delivered).toEqual([{ from: "agent", text: json.reply }]);
  });

  it("with max_plans 2, children that fail, time out or finish each take a slot in turn: every end releases it", async () => {
    const timers = new ManualTimers();
    const h = gateway({ tools: { todo: { enabled: true, max_plans: 2 } }, subturn: { timeout_ms: 300 } }, timers.timer);
    const ends = record(h, "subagent.end");
    const failing = [writePlan("a", "fails"), "FAIL 400"].join("\n");
    const slow = [writePlan("b", "times out"), "WAIT never"].join("\n");
    const fine = [writePlan("c", "finishes"), "SAY fine"].join("\n");
    const chat = h.chat({
      message: [writePlan("p", "parent"), ...[failing, slow, fine].map((task) => call("subagent", { task }))].join("\n"),
    });
    // The slow child wrote its plan and waits for an answer that never comes: its timeout_ms runs out (only its own).
    await eventually(() => expect(childRequests(slow)).toHaveLength(2));
    expect(ends.map((e) => e.outcome)).toEqual(["error"]);
    expect(timers.pending().map((t) => t.ms)).toEqual([300]);
    timers.fireAll();
    const { status } = await chat;
    expect(status).toBe(200);
    expect(ends.map((e) => e.outcome)).toEqual(["error", "timeout", "done"]);
    for (const task of [failing, slow, fine]) {
      const [, second] = childRequests(task).slice(-2);
      expect(JSON.parse(toolResults(second!)[0]!).message, task).toBe("Updated 1 todos");
    }
    expect(h.plans.size).toBe(1);
  });

  it("an agent whose allowlist lacks todo has children that neither see nor run it", async () => {
    const h = gateway();
    const task = [writePlan("x", "sneaky"), "SAY tried"].join("\n");
    await h.chat({ message: call("subagent", { task }), agent: "narrow" });
    const [first, second] = childRequests(task).slice(-2);
    expect(first!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["subagent"]);
    expect(toolResults(second!)[0]).toMatch(/^tool "todo" is not available to this agent/);
    expect(h.plans.size).toBe(0);
  });

  it("nesting deeper than max_depth gets an error result and the turn completes", async () => {
    const h = gateway({ subturn: { max_depth: 1 } });
    const grandchild = "SAY too deep";
    const child = [call("subagent", { task: grandchild }), "SAY child done"].join("\n");
    const { status, json } = await h.chat({ message: call("subagent", { task: child }) });
    expect(status).toBe(200);
    expect(json.reply).toContain("child done");
    const [, second] = childRequests(child).slice(-2);
    expect(toolResults(second!)[0]).toBe("subagents may nest at most 1 deep (agents.defaults.subturn.max_depth); do this work yourself");
    expect(childRequests(grandchild)).toHaveLength(0);
  });

  it("tools.subagent.deliver shows the child's reply to the user; by default it stays silent", async () => {
    const task = "SAY the child's answer";
    const quiet = await gateway().chat({ message: call("subagent", { task }) });
    expect(quiet.json.delivered.map((d: { from: string }) => d.from)).toEqual(["agent"]);
    const loud = await gateway({ tools: { subagent: { deliver: true } } }).chat({ message: call("subagent", { task }) });
    expect(loud.json.delivered[0]).toEqual({ from: "subagent", text: "the child's answer" });
  });

  it("keep_history keeps a finished child's history readable", async () => {
    const h = gateway({ tools: { subagent: { keep_history: true } } });
    const ends = record(h, "subagent.end");
    await h.chat({ message: call("subagent", { task: "SAY kept" }) });
    const history = await jsonOf(await h.request(`/v1/sessions/${ends[0]!.childKey}/history`));
    expect(history.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(history.messages[1].content).toBe("kept");
  });
});

describe("limits hold even against a tool that ignores its abort signal", () => {
  const deaf = defineTool({
    name: "deaf",
    description: "Never answers, ignores aborts.",
    parameters: z.object({}),
    timeoutMs: 0,
    enabledByDefault: true,
    execute: () => new Promise<never>(() => {}),
  });

  function deafGateway(subturn: Record<string, unknown> = {}) {
    const base = openaiConfig(model.server.url) as { agents: { defaults: Record<string, unknown> } };
    return harness({ agents: AGENTS, tools: [deaf], config: { ...base, agents: { defaults: { ...base.agents.defaults, subturn } } } });
  }

  it("a child's timeout_ms ends it", async () => {
    const h = deafGateway({ timeout_ms: 100 });
    const ends = record(h, "subagent.end");
    const { status, json } = await h.chat({ message: [call("subagent", { task: call("deaf", {}) }), "SAY parent done"].join("\n") });
    expect(status).toBe(200);
    expect(json.reply).toBe("parent done");
    expect(ends.map((e) => e.outcome)).toEqual(["timeout"]);
  });

  it("/stop ends the turn", async () => {
    const h = deafGateway();
    const starts = record(h, "tool.start");
    const turn = h.chat({ message: call("deaf", {}), session: "deaf" });
    await waitFor("the deaf tool's call to start", () => starts.length > 0);
    expect((await h.chat({ message: "/stop", session: "deaf" })).json.reply).toBe("Stopped.");
    expect(await turn).toMatchObject({ status: 200, json: { stopped: true } });
  });
});

describe("delegate and spawn with agent_id", () => {
  it("runs as an agent allow_agents lists, with that agent's prompt", async () => {
    const h = gateway();
    const ends = record(h, "subagent.end");
    const task = "SAY research done";
    const { json } = await h.chat({ message: call("delegate", { agent_id: "researcher", task }) });
    expect(json.reply).toContain("research done");
    expect(ends[0]).toMatchObject({ agentId: "researcher", outcome: "done" });
    expect(childRequests(task).at(-1)!.body.messages[0]).toEqual({ role: "system", content: "You research." });
  });

  it("delegate is offered only to agents whose allow_agents lists someone; spawn then has no agent_id", async () => {
    const h = harness({
      agents: { main: "---\nname: Main\n---\nAlone.", lead: "---\nallow_agents: [main]\n---\nLeads." },
      config: { ...openaiConfig(model.server.url), tools: DEFAULT_TOOLS_OFF },
    });
    const agents = await jsonOf(await h.request("/v1/agents"));
    expect(agents.agents.map((a: { id: string; tools: string[] }) => [a.id, a.tools])).toEqual([
      ["lead", ["delegate", "spawn", "subagent"]],
      ["main", ["spawn", "subagent"]],
    ]);
    await h.chat({ message: "SAY hi" });
    const spawn = model.server.requests.at(-1)!.body.tools.find((t: { function: { name: string } }) => t.function.name === "spawn");
    expect(Object.keys(spawn.function.parameters.properties)).toEqual(["task", "label"]);
    expect((await h.chat({ message: call("delegate", { agent_id: "lead", task: "x" }) })).json.reply).toMatch(
      /^done: tool "delegate" is not available to this agent/,
    );
  });

  it("refuses agents not listed, unknown agents and itself: the agent_id schema lists only the allowed agents", async () => {
    const h = gateway();
    const { json } = await h.chat({
      message: [
        call("delegate", { agent_id: "narrow", task: "x" }),
        call("delegate", { agent_id: "main", task: "x" }),
        call("spawn", { agent_id: "narrow", task: "x" }),
      ].join("\n"),
    });
    const results = json.reply.replace(/^done: /, "").split(" | ");
    expect(results[0]).toBe('invalid arguments for tool "delegate": agent_id: expected one of "researcher"');
    expect(results[1]).toBe('invalid arguments for tool "delegate": agent_id: expected one of "researcher"');
    expect(results[2]).toBe('invalid arguments for tool "spawn": agent_id: expected one of "researcher"');
    const delegate = model.server.requests.at(-1)!.body.tools.find((t: { function: { name: string } }) => t.function.name === "delegate");
    expect(delegate.function.parameters.properties.agent_id).toEqual({
      type: "string",
      enum: ["researcher"],
      description: "The agent to hand the task to: researcher.",
    });
    const star = harness({
      agents: { main: "---\nallow_agents: ['*']\n---\np", other: "---\ndescription: Does other things\n---\np" },
      config: { ...openaiConfig(model.server.url) },
    });
    const ghost = await star.chat({ message: call("delegate", { agent_id: "ghost", task: "x" }) });
    expect(ghost.json.reply).toBe('done: invalid arguments for tool "delegate": agent_id: expected one of "other"');
  });
});

describe("spawn", () => {
  it("returns at once; the result arrives on the events stream, answered by the parent", async () => {
    const h = gateway();
    const stream = sseReader(await h.request("/v1/sessions/agent:main:http:bg/events"));
    const { json } = await h.chat({
      message: [call("spawn", { task: "WAIT bg\nSAY the background answer", label: "bg" }), "SAY started it"].join("\n"),
      session: "bg",
    });
    expect(json.reply).toBe("started it");
    // The child answers only now, after the parent's reply went out.
    openGate("bg");
    const seen = await stream.until("subagent.end");
    expect(seen.map((e) => e.event)).toEqual(["turn.start", "subagent.start", "delivery", "turn.end", "subagent.end"]);
    expect(seen[1]!.data).toEqual({ id: expect.any(String), label: "bg", agent: "main" });
    expect(seen[2]!.data).toEqual({ from: "agent", text: "started it" });
    expect(seen[4]!.data).toEqual({ id: seen[1]!.data.id, label: "bg", agent: "main", outcome: "done", durationMs: expect.any(Number) });
    // The parent answers the result in a turn of its own.
    const answer = await stream.until("turn.end");
    expect(answer.map((e) => e.event)).toEqual(["turn.start", "delivery", "turn.end"]);
    expect(answer[1]).toEqual({ event: "delivery", data: { from: "agent", text: "the background answer" } });
    expect(JSON.stringify(stream.events)).not.toContain("agent:main:http:bg:subagent");
    await stream.close();
    const history = await h.runtime.historyOf("agent:main:http:bg");
    const note = history.filter((m) => m.role === "user").at(-1)!.content as string;
    expect(note).toMatch(/^\[System note: background subagent "bg"/);
    expect(note).toContain("the background answer");
  });

  it("with no stream open, the result comes at the front of the next chat's delivered, once", async () => {
    const h = gateway();
    await h.chat({ message: [call("spawn", { task: "SAY later answer", label: "later" }), "SAY ok"].join("\n"), session: "nostream" });
    await h.runtime.idle();
    const next = await h.chat({ message: "SAY and now", session: "nostream" });
    expect(next.json.delivered).toEqual([
      { from: "agent", text: "later answer" },
      { from: "agent", text: "and now" },
    ]);
    const again = await h.chat({ message: "SAY again", session: "nostream" });
    expect(again.json.delivered).toEqual([{ from: "agent", text: "again" }]);
  });

  it("a stream opened later receives what was kept", async () => {
    const h = gateway();
    await h.chat({ message: call("spawn", { task: "SAY kept for you" }), session: "late" });
    await h.runtime.idle();
    const stream = sseReader(await h.request("/v1/sessions/agent:main:http:late/events"));
    expect(await stream.next()).toEqual({ event: "delivery", data: { from: "agent", text: "kept for you" } });
    await stream.close();
  });
});

describe("spawn inside a subagent", () => {
  it("is not offered to a subagent, and a call to it anyway is refused: no result can land in a session that has ended", async () => {
    const h = gateway();
    const child = [call("spawn", { task: [writePlan("g", "grandchild"), "SAY late"].join("\n") }), "SAY child done"].join("\n");
    const { json } = await h.chat({ message: call("subagent", { task: child }) });
    expect(json.reply).toContain("child done");
    const [first, second] = childRequests(child).slice(-2);
    expect(first!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["delegate", "subagent", "todo"]);
    expect(toolResults(second!)[0]).toMatch(/^tool "spawn" is not available to this agent/);
    await h.runtime.idle();
    expect(h.plans.size).toBe(0);
    expect(h.runtime.sessionKeys()).toHaveLength(1);
  });
});

describe("/stop and /subagents", () => {
  it("/subagents lists running children; /stop ends them at once without waiting for the session lock", async () => {
    const h = gateway();
    const starts = record(h, "subagent.start");
    const ends = record(h, "subagent.end");
    const turn = h.chat({ message: call("subagent", { task: "SLOW 30000", label: "long one" }), session: "stop" });
    await waitFor("the subagent to start", () => starts.length > 0);
    const listed = await h.chat({ message: "/subagents", session: "stop" });
    expect(listed.json.reply).toMatch(/^1 subagent running:\n- long one \([A-Za-z0-9_-]+\): agent main, depth 1, running for \d+ s$/);
    const stopped = await h.chat({ message: "/stop", session: "stop" });
    expect(stopped.json.reply).toBe("Stopped, along with 1 subagent.");
    const result = await turn;
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({ stopped: true, reply: expect.stringMatching(/^Stopped by \/stop/) });
    // The child's end is told once its abort has run through, which may be a moment after the parent's answer.
    await waitFor("the subagent's end", () => ends.length > 0);
    expect(ends.map((e) => e.outcome)).toEqual(["aborted"]);
    expect((await h.chat({ message: "/subagents", session: "stop" })).json.reply).toBe("No subagents are running.");
    expect((await h.chat({ message: "/stop", session: "stop" })).json.reply).toBe("Nothing was running.");
    expect((await h.chat({ message: "SAY still works", session: "stop" })).json.reply).toBe("still works");
  });

  it("/stop also ends background (spawned) children", async () => {
    const h = gateway();
    const ends = record(h, "subagent.end");
    await h.chat({ message: call("spawn", { task: "SLOW 30000" }), session: "bgstop" });
    expect((await h.chat({ message: "/stop", session: "bgstop" })).json.reply).toBe("Stopped, along with 1 subagent.");
    await h.runtime.idle();
    expect(ends.map((e) => e.outcome)).toEqual(["aborted"]);
    // A stopped child wakes nobody: no system note, no extra turn, nothing waiting for the user.
    const next = await h.chat({ message: "SAY next", session: "bgstop" });
    expect(next.json.delivered).toEqual([{ from: "agent", text: "next" }]);
    expect((await h.runtime.historyOf("agent:main:http:bgstop")).some((m) => String(m.content).includes("System note"))).toBe(false);
  });
});

describe("max_running: subagents running in the whole gateway", () => {
  /** The most children running at once, as subagent.start and subagent.end tell. */
  function peakOf(h: Harness): () => number {
    let running = 0;
    let peak = 0;
    h.runtime.on("subagent.start", () => (peak = Math.max(peak, ++running)));
    h.runtime.on("subagent.end", () => running--);
    return () => peak;
  }

  /** A CALL line whose arguments may hold " && " (escaped, so the line splits only between calls). */
  const callSafe = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args).replaceAll("&", "\\u0026")}`;
  const fanOut = (...calls: string[]) => calls.join(" && ");

  it("a fan-out that would start more never runs more than the cap; a subagent's children over it get an error result at once", async () => {
    const h = gateway({ subturn: { max_running: 4 } }, new ManualTimers().timer);
    const peak = peakOf(h);
    const starts = record(h, "subagent.start");
    const ends = record(h, "subagent.end");
    const toolEnds = record(h, "tool.end");
    const leaf = "WAIT fan-leaf\nSAY leaf";
    // Each middle asks for its children only once all three middles run (fan-mid), and answers only once the
    // test says (fan-mid-end): a middle that finished early would free a place for another middle's child.
    const middle = `GATE fan-mid\n${fanOut(call("subagent", { task: leaf }), call("subagent", { task: leaf }))}\nGATE fan-mid-end\nSAY middle`;
    // 3 children, each asking for 2 of its own: 9 in all, with room for 4.
    const chat = h.chat({ message: fanOut(...[1, 2, 3].map((n) => callSafe("subagent", { task: middle, label: `m${n}` }))) });
    await eventually(() => expect(starts).toHaveLength(3));
    openGate("fan-mid");
    await eventually(() => expect(toolEnds.filter((e) => e.isError)).toHaveLength(5));
    expect(starts).toHaveLength(4);
    openGate("fan-leaf");
    openGate("fan-mid-end");
    const { status } = await chat;
    expect(status).toBe(200);
    expect(ends.map((e) => e.outcome)).toEqual(["done", "done", "done", "done"]);
    expect(peak()).toBe(4);
    const refusals = model.server.requests.flatMap((r) => toolResults(r)).filter((text) => text.startsWith("too many subagents are running in the gateway"));
    expect(new Set(refusals)).toEqual(
      new Set(["too many subagents are running in the gateway (agents.defaults.subturn.max_running = 4); do this work yourself"]),
    );
  });

  it("children of a user's turn over the cap wait for a place and then run", async () => {
    const timers = new ManualTimers();
    const h = gateway({ subturn: { max_running: 2 } }, timers.timer);
    const peak = peakOf(h);
    const starts = record(h, "subagent.start");
    const ends = record(h, "subagent.end");
    const task = "WAIT fan-root\nSAY ran";
    const chat = h.chat({ message: fanOut(...[1, 2, 3].map((n) => call("subagent", { task, label: `r${n}` }))) });
    await eventually(() => expect(starts).toHaveLength(2));
    // The third waits for a place, at most concurrency_timeout_ms.
    await eventually(() => expect(timers.pending().map((t) => t.ms)).toContain(30_000));
    openGate("fan-root");
    const { status, json } = await chat;
    expect(status).toBe(200);
    expect(json.reply.split(" | ").filter((r: string) => r.includes("finished"))).toHaveLength(3);
    expect(ends.map((e) => e.outcome)).toEqual(["done", "done", "done"]);
    expect(peak()).toBe(2);
  });
});
