/**
 * Ask before acting, through the real routes (hono's app.request): a call
 * of a tool under approval "ask" waits for a person's decision on the
 * approvals route, runs only after allow, never after deny, a timeout,
 * /stop or /clear; allow_session skips the next ask in that session only;
 * a waiting call holds up its own session, never another; where nobody
 * can answer, ask is deny. ask_user takes the user's next message as its
 * answer. The built-in model scripts the calls; `touch` counts its runs.
 */
// biome-ignore-all lint/suspicious/noExplicitAny: the routes' JSON, read as the tests check it
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, toolResult } from "../../src/tools/tool.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf } from "../support/project.js";
import { sseReader } from "../support/sse.js";
import { ManualTimers } from "../support/timers.js";
import { waitFor, within } from "../support/wait.js";

function touchTool(runs: string[]) {
  return defineTool({
    name: "touch",
    description: "Touches a thing (counts its runs).",
    parameters: z.strictObject({ thing: z.string() }),
    enabledByDefault: true,
    execute: (args) => {
      runs.push(args.thing);
      return toolResult.text(`touched ${args.thing}`);
    },
  });
}

/** A tool whose call holds its turn (and so its session) until `free`. */
function holdTool() {
  let holding = false;
  let free!: () => void;
  const held = new Promise<void>((resolve) => (free = resolve));
  const hold = defineTool({
    name: "hold",
    description: "Holds its turn until the test lets it go.",
    parameters: z.strictObject({}),
    enabledByDefault: true,
    execute: async () => {
      holding = true;
      await held;
      return "held";
    },
  });
  return { hold, holding: () => holding, free: () => free() };
}

const touch = (thing: string) => `CALL touch ${JSON.stringify({ thing })}`;
const SESSION = "agent:main:http:default";

/** A gateway whose `touch` tool asks first; `tools` adds to its tools section. */
function gateway(runs: string[], tools: Record<string, unknown> = {}, timers = new ManualTimers()): Harness {
  return harness({ tools: [touchTool(runs)], timer: timers.timer, config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" }, ...tools } } });
}

async function pending(h: Harness, key = SESSION): Promise<{ approvals: any[]; questions: any[] }> {
  return jsonOf(await h.request(`/v1/sessions/${key}/approvals`));
}

async function waitingApproval(h: Harness, key = SESSION): Promise<any> {
  await waitFor("an approval request", async () => (await pending(h, key)).approvals.length > 0);
  return (await pending(h, key)).approvals[0];
}

function decide(h: Harness, id: string, decision: string, key = SESSION, headers: Record<string, string> = {}) {
  return h.request(`/v1/sessions/${key}/approvals/${id}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ decision }),
  });
}

const records = async (h: Harness, key = SESSION) =>
  (await jsonOf(await h.request(`/v1/sessions/${key}/history`))).messages.filter((m: any) => m.role === "system" && m.record);

describe("a call under approval ask", () => {
  it("emits approval.requested on the session's events stream and runs only after allow", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const events = sseReader(await h.request(`/v1/sessions/${SESSION}/events`));
    const answer = h.chat({ message: touch("door") });
    const requested = (await events.until("approval.requested")).at(-1)!;
    expect(requested.data).toMatchObject({ tool: "touch", arguments: { thing: "door" }, session_key: SESSION });
    expect(Date.parse(requested.data.expires_at)).toBeGreaterThan(Date.now());
    expect(runs).toEqual([]);
    const listed = await waitingApproval(h);
    expect(listed.id).toBe(requested.data.id);

    const res = await decide(h, listed.id, "allow");
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ id: listed.id, decision: "allow", tool: "touch" });
    const { status, json } = await within("the turn", answer);
    expect(status).toBe(200);
    expect(runs).toEqual(["door"]);
    expect(json.reply).toContain("touched door");
    expect((await events.until("approval.resolved")).at(-1)!.data).toMatchObject({
      id: listed.id,
      decision: "allow",
      by: "api",
      tool: "touch",
      session_key: SESSION,
    });
    expect((await pending(h)).approvals).toEqual([]);
    events.close();
  });

  it("never runs after deny; the model reads that the user declined, and the history records who decided", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const answer = h.chat({ message: touch("door") });
    const approval = await waitingApproval(h);
    expect((await decide(h, approval.id, "deny", SESSION, { "x-picoclaw-client": "page" })).status).toBe(200);
    const { json } = await answer;
    expect(runs).toEqual([]);
    expect(json.reply).toMatch(/touch \(error\): The user declined to run touch/);
    const [record] = await records(h);
    expect(record.record).toMatchObject({ type: "approval", id: approval.id, tool: "touch", decision: "deny", by: "page" });
    expect(record.record.arguments_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(record.content).toMatch(/touch denied by page/);
  });

  it("a second decision on the same id is 409, an unknown id 404, another session's id 404", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const answer = h.chat({ message: touch("door"), session: "alice" });
    const alice = "agent:main:http:alice";
    const approval = await waitingApproval(h, alice);
    // Bob's session cannot decide Alice's request, and learns nothing of it.
    const other = await decide(h, approval.id, "allow", "agent:main:http:bob");
    expect(other.status).toBe(404);
    expect((await decide(h, "ap_nope", "allow", alice)).status).toBe(404);
    expect(runs).toEqual([]);
    expect((await decide(h, approval.id, "allow", alice)).status).toBe(200);
    const again = await decide(h, approval.id, "deny", alice);
    expect(again.status).toBe(409);
    expect((await jsonOf(again)).error.code).toBe("conflict");
    await answer;
    expect(runs).toEqual(["door"]);
  });

  it("refuses a decision that is not allow, deny or allow_session, and a body that is not JSON", async () => {
    const h = gateway([]);
    const answer = h.chat({ message: touch("door") });
    const approval = await waitingApproval(h);
    const bad = await decide(h, approval.id, "maybe");
    expect(bad.status).toBe(400);
    expect((await jsonOf(bad)).error.message).toMatch(/decision/);
    const notJson = await h.request(`/v1/sessions/${SESSION}/approvals/${approval.id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(notJson.status).toBe(400);
    expect((await pending(h)).approvals).toHaveLength(1);
    await decide(h, approval.id, "deny");
    await answer;
  });

  it("is denied when nobody answers within tools.approval_timeout_ms", async () => {
    const runs: string[] = [];
    const timers = new ManualTimers();
    const h = gateway(runs, { approval_timeout_ms: 5000 }, timers);
    const answer = h.chat({ message: touch("door") });
    await waitingApproval(h);
    expect(timers.fireAll(5000)).toBe(1);
    const { json } = await answer;
    expect(runs).toEqual([]);
    expect(json.reply).toMatch(/nobody answered its approval request within 5 s \(tools\.approval_timeout_ms\)/);
    expect((await records(h))[0].record).toMatchObject({ decision: "deny", by: "timeout" });
  });

  it("allow_session skips the next ask in that session, not in another", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const first = h.chat({ message: touch("one") });
    await decide(h, (await waitingApproval(h)).id, "allow_session");
    await first;
    // The same session: no request this time.
    const { json } = await within("a turn that does not ask", h.chat({ message: touch("two") }));
    expect(json.reply).toContain("touched two");
    expect(runs).toEqual(["one", "two"]);
    // Another session asks again.
    const other = h.chat({ message: touch("three"), session: "other" });
    const approval = await waitingApproval(h, "agent:main:http:other");
    expect(runs).toEqual(["one", "two"]);
    await decide(h, approval.id, "deny", "agent:main:http:other");
    await other;
    expect(runs).toEqual(["one", "two"]);
  });

  it("holds up its own session only: another session's turn runs meanwhile, and the session's next message queues", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const waiting = h.chat({ message: touch("slow") });
    const approval = await waitingApproval(h);
    const { json } = await within("another session's turn", h.chat({ message: "hello", session: "other" }));
    expect(json.reply).toContain("You said: hello");
    let queuedDone = false;
    const queued = h.chat({ message: "after" }).then((r) => {
      queuedDone = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(queuedDone).toBe(false);
    await decide(h, approval.id, "allow");
    await waiting;
    expect((await queued).json.reply).toContain("You said: after");
  });

  it("/stop denies it: the turn ends stopped and nothing ran", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const events = sseReader(await h.request(`/v1/sessions/${SESSION}/events`));
    const answer = h.chat({ message: touch("door") });
    const approval = await waitingApproval(h);
    expect((await h.chat({ message: "/stop" })).json.reply).toMatch(/Stopped/i);
    const { json } = await answer;
    expect(json.stopped).toBe(true);
    expect(runs).toEqual([]);
    expect((await events.until("approval.resolved")).at(-1)!.data).toMatchObject({ id: approval.id, decision: "deny", by: "stop" });
    await waitFor("the record", async () => (await records(h)).length === 1);
    expect((await records(h))[0].record).toMatchObject({ decision: "deny", by: "stop" });
    expect((await decide(h, approval.id, "allow")).status).toBe(409);
    events.close();
  });

  it("/clear denies it at once (the turn ends, then the clear runs) and forgets allow_session", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const first = h.chat({ message: touch("a") });
    await decide(h, (await waitingApproval(h)).id, "allow_session");
    await first;
    // b and c run without asking (allow_session).
    await within("the granted calls", h.chat({ message: `${touch("b")}\n${touch("c")}` }));
    expect(runs).toEqual(["a", "b", "c"]);
    expect((await within("/clear", h.chat({ message: "/clear" }))).json.reply).toMatch(/^Cleared/);
    // After the clear, the session asks again; a /clear while it waits denies it.
    const again = h.chat({ message: touch("d") });
    await waitingApproval(h);
    const cleared = await within("/clear while a call waits", h.chat({ message: "/clear" }));
    expect(cleared.json.reply).toMatch(/^Cleared/);
    const { json } = await again;
    expect(json.reply).toMatch(/the session was cleared while it waited for approval/);
    expect(runs).toEqual(["a", "b", "c"]);
    expect((await pending(h)).approvals).toEqual([]);
  });

  it.each([
    ["DELETE /v1/sessions/<key>", (h: Harness) => h.request(`/v1/sessions/${SESSION}`, { method: "DELETE" })],
    ["/clear", (h: Harness) => h.chat({ message: "/clear" })],
  ])(
    "a call that asks while %s waits for the session (a turn queued before it) is denied at once, never asked: the clear does not wait out a person's time",
    async (_name, clear) => {
      const runs: string[] = [];
      const { hold, holding, free } = holdTool();
      const h = harness({ tools: [touchTool(runs), hold], config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } } } });
      const first = h.chat({ message: "CALL hold {}" });
      await waitFor("the turn holding the session", holding);
      const queued = h.chat({ message: touch("x") });
      await waitFor("the call's turn queued behind it", () => h.runtime.stats().queuedTurns === 1);
      const cleared = clear(h);
      free();
      await within("the first turn", first);
      const { json } = await within("the queued turn, not asked", queued);
      expect(json.reply).toMatch(/touch was not run: the session is being cleared/);
      expect((await within("the clear", cleared)).status).toBeLessThan(300);
      expect(runs).toEqual([]);
      expect((await pending(h)).approvals).toEqual([]);
      // The clear done, the session asks again.
      const after = h.chat({ message: touch("y") });
      await waitingApproval(h);
      await decide(h, (await waitingApproval(h)).id, "allow");
      await within("the call after the clear", after);
      expect(runs).toEqual(["y"]);
    },
  );

  it("a /clear whose client leaves while it waits for the session is done: calls after it are asked again", async () => {
    const runs: string[] = [];
    const { hold, holding, free } = holdTool();
    const h = harness({ tools: [touchTool(runs), hold], config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } } } });
    const first = h.chat({ message: "CALL hold {}" });
    await waitFor("the turn holding the session", holding);
    const gone = new AbortController();
    const clear = h
      .request("/v1/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: "/clear" }),
        signal: gone.signal,
      })
      .catch(() => "left");
    await waitFor("the /clear queued", () => h.runtime.stats().queuedTurns === 1);
    gone.abort();
    await clear;
    await waitFor("the /clear gone from the queue", () => h.runtime.stats().queuedTurns === 0);
    free();
    await within("the first turn", first);
    const after = h.chat({ message: touch("z") });
    await decide(h, (await waitingApproval(h)).id, "allow");
    await within("the call, asked and allowed", after);
    expect(runs).toEqual(["z"]);
  });

  it("is denied at once, with the reason, in a stateless OpenAI request (nobody can answer there)", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const res = await h.request("/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "main", messages: [{ role: "user", content: touch("door") }] }),
    });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body.choices[0].message.content).toMatch(/touch was not run: it needs a person's approval .* nobody can answer in a conversation the client keeps/);
    expect(runs).toEqual([]);
  });
});

describe("the approval policy", () => {
  it("deny hides the tool from the agent (the model is never shown it); AGENT.md approval: overrides the config per agent", async () => {
    const runs: string[] = [];
    const h = harness({
      tools: [touchTool(runs)],
      config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "deny" } } },
      agents: {
        main: "---\nname: Main\n---\nmain",
        trusted: "---\nname: Trusted\napproval:\n  touch: allow\n---\ntrusted",
      },
    });
    const agents = (await jsonOf(await h.request("/v1/agents"))).agents;
    expect(agents.find((a: any) => a.id === "main").tools).not.toContain("touch");
    expect(agents.find((a: any) => a.id === "trusted").tools).toContain("touch");
    const { json } = await h.chat({ message: touch("door") });
    expect(json.reply).toMatch(/tool "touch" is not available to this agent/);
    expect((await h.chat({ message: touch("door"), agent: "trusted" })).json.reply).toContain("touched door");
    expect(runs).toEqual(["door"]);
  });

  it("a bad approval value stops start-up naming the key; a bad AGENT.md approval: fails that agent closed", () => {
    expect(() => harness({ config: { tools: { exec: { approval: "sometimes" } } } })).toThrow(/tools\.exec\.approval/);
    const h = harness({ agents: { main: "---\nname: Main\napproval:\n  exec: maybe\n---\nmain" } });
    expect(h.warnings.join("\n")).toMatch(/frontmatter does not parse/);
  });

  it("PICOCLAW_TOOLS_<NAME>_APPROVAL sets it from the environment, over the file", async () => {
    const h = harness({ env: { PICOCLAW_TOOLS_EXEC_APPROVAL: "deny" }, config: { tools: { exec: { approval: "ask" } } } });
    expect((await jsonOf(await h.request("/v1/agents"))).agents[0].tools).not.toContain("exec");
    expect(() => harness({ env: { PICOCLAW_TOOLS_EXEC_APPROVAL: "later" } })).toThrow(/PICOCLAW_TOOLS_EXEC_APPROVAL|tools\.exec\.approval/);
  });

  it("a streamed chat answer carries approval.requested and approval.resolved among its events", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const res = await h.request("/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: touch("door"), stream: true }),
    });
    const stream = sseReader(res);
    const requested = (await stream.until("approval.requested")).at(-1)!.data;
    expect(requested).toMatchObject({ tool: "touch", session_key: SESSION });
    await decide(h, requested.id, "allow");
    const rest = await stream.until("turn.end");
    expect(rest.map((e) => e.event)).toContain("approval.resolved");
    expect(rest.at(-1)!.data.reply).toContain("touched door");
  });

  it("exec is on by default, under ask", async () => {
    const h = harness({});
    expect((await jsonOf(await h.request("/v1/agents"))).agents[0].tools).toContain("exec");
    const answer = h.chat({ message: `CALL exec ${JSON.stringify({ action: "run", command: "echo hi" })}` });
    const approval = await waitingApproval(h);
    expect(approval).toMatchObject({ tool: "exec", arguments: { action: "run", command: "echo hi" } });
    await decide(h, approval.id, "deny");
    expect((await answer).json.reply).toMatch(/The user declined to run exec/);
  });
});

describe("what the review found, fixed", () => {
  it("allow_session allows that agent's tool only: an agent it delegates to is asked for its own", async () => {
    const runs: string[] = [];
    const h = harness({
      tools: [touchTool(runs)],
      config: { tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } } },
      agents: { main: "---\nname: Main\nallow_agents: [coder]\n---\nmain", coder: "---\nname: Coder\n---\ncoder" },
    });
    const first = h.chat({ message: touch("one") });
    await decide(h, (await waitingApproval(h)).id, "allow_session");
    await first;
    const delegated = h.chat({ message: `CALL delegate ${JSON.stringify({ agent_id: "coder", task: touch("two") })}` });
    const asked = await waitingApproval(h);
    expect(asked).toMatchObject({ agent: "coder", tool: "touch" });
    expect(runs).toEqual(["one"]);
    await decide(h, asked.id, "deny");
    await delegated;
    expect(runs).toEqual(["one"]);
    // main's own grant still holds.
    await within("main's granted call", h.chat({ message: touch("three") }));
    expect(runs).toEqual(["one", "three"]);
  });

  it("/stop while the request is still being kept denies it, removes it from the state store and records it", async () => {
    const runs: string[] = [];
    const h = gateway(runs);
    const store = (h.runtime as any).state;
    const put = store.put.bind(store);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let putting!: () => void;
    const started = new Promise<void>((resolve) => (putting = resolve));
    store.put = async (namespace: string, ...rest: unknown[]) => {
      if (namespace === "approvals") {
        putting();
        await held;
      }
      return put(namespace, ...rest);
    };
    const answer = h.chat({ message: touch("door") });
    await started;
    await h.chat({ message: "/stop" });
    release();
    expect((await answer).json.stopped).toBe(true);
    await waitFor("the record", async () => (await records(h)).length === 1);
    expect((await records(h))[0].record).toMatchObject({ decision: "deny", by: "stop" });
    expect(await store.list("approvals")).toEqual([]);
    expect(runs).toEqual([]);
  });

  it("a named OpenAI-compatible session denies at once: its clients cannot show a request, and its next message is no answer", async () => {
    const runs: string[] = [];
    const h = gateway(runs, { ask_user: { enabled: true } });
    const post = (content: string) =>
      h.request("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", "x-session-id": "s1" },
        body: JSON.stringify({ model: "main", messages: [{ role: "user", content }] }),
      });
    const first = await jsonOf(await within("a call that asks nobody", post(touch("door"))));
    expect(first.choices[0].message.content).toMatch(/touch was not run: .* nobody can answer in a openai conversation/);
    const asked = await jsonOf(await within("a question nobody sees", post(`CALL ask_user ${JSON.stringify({ question: "Sure?" })}`)));
    expect(asked.choices[0].message.content).toMatch(/No answer: the question was not asked/);
    expect(runs).toEqual([]);
  });

  it("summarising keeps the session's records", async () => {
    const runs: string[] = [];
    const h = harness({
      tools: [touchTool(runs)],
      config: {
        agents: { defaults: { model_name: "tiny", summarize: true } },
        model_list: [{ model_name: "tiny", provider: "builtin", model: "x", context_window: 1024 }],
        tools: { ...DEFAULT_TOOLS_OFF, touch: { approval: "ask" } },
      },
    });
    const answer = h.chat({ message: touch("door") });
    await decide(h, (await waitingApproval(h)).id, "allow");
    await answer;
    expect(await records(h)).toHaveLength(1);
    for (let i = 0; i < 12; i++) await h.chat({ message: `filler ${i} ${"lorem ipsum dolor sit amet ".repeat(40)}` });
    const messages = (await jsonOf(await h.request(`/v1/sessions/${SESSION}/history`))).messages;
    expect(messages.length).toBeLessThan(26);
    expect(await records(h)).toHaveLength(1);
  });
});

describe("asking only about calls that could run", () => {
  it("a command exec's guard refuses, and a call with bad arguments, are refused without asking anyone", async () => {
    const h = harness({});
    const events: string[] = [];
    h.runtime.on("approval.requested", (e) => events.push(e.tool));
    const { json } = await within(
      "a turn that asks nobody",
      h.chat({ message: [`CALL exec ${JSON.stringify({ action: "run", command: "r'm' -rf /" })}`, `CALL exec ${JSON.stringify({ command: 42 })}`].join("\n") }),
    );
    expect(json.reply).toMatch(/1\. exec \(error\): Command blocked by safety guard \(dangerous pattern detected/);
    expect(json.reply).toMatch(/2\. exec \(error\): invalid arguments for tool "exec"/);
    expect(events).toEqual([]);
  });
});

describe("ask_user", () => {
  it("pauses the turn until the user's next message, which answers it and is no turn of its own", async () => {
    const h = harness({ config: { tools: { ...DEFAULT_TOOLS_OFF, ask_user: { enabled: true } } } });
    const events = sseReader(await h.request(`/v1/sessions/${SESSION}/events`));
    const asking = h.chat({ message: `CALL ask_user ${JSON.stringify({ question: "Which colour?", options: ["red", "blue"] })}` });
    const asked = (await events.until("question.asked")).at(-1)!;
    expect(asked.data).toMatchObject({ question: "Which colour?", options: ["red", "blue"], session_key: SESSION });
    expect((await pending(h)).questions).toMatchObject([{ id: asked.data.id, question: "Which colour?" }]);
    const answered = await within("the answer", h.chat({ message: "blue" }));
    expect(answered.json).toMatchObject({ reply: "", delivered: [], answered: true });
    const { json } = await within("the turn that asked", asking);
    expect(json.reply).toMatch(/ask_user: The user answered: blue/);
    const history = (await jsonOf(await h.request(`/v1/sessions/${SESSION}/history`))).messages;
    // The answer is the tool's result, not a user message of its own.
    expect(history.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual([expect.stringMatching(/^CALL ask_user/)]);
    expect((await pending(h)).questions).toEqual([]);
    events.close();
  });

  it("says so when nobody answers within the approval timeout", async () => {
    const timers = new ManualTimers();
    const h = harness({ config: { tools: { ...DEFAULT_TOOLS_OFF, ask_user: { enabled: true } } }, timer: timers.timer });
    const asking = h.chat({ message: `CALL ask_user ${JSON.stringify({ question: "Still there?" })}` });
    await waitFor("the question", async () => (await pending(h)).questions.length === 1);
    timers.fireAll(300_000);
    expect((await asking).json.reply).toMatch(/No answer: the user did not answer within 300 s/);
  });
});
