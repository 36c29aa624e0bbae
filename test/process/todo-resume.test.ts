/**
 * The phases style across a restart (oh-my-pi's rule): a successful call's
 * plan is kept with its result in the session file, and a new process takes
 * the latest one back with its completed and abandoned tasks left out, while
 * `/todo` still shows them. The list style stays in memory (PicoClaw's rule).
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RecordedRequest } from "../support/fake-openai.js";
import { DEFAULT_TOOLS_OFF, type Harness, harness, jsonOf, openaiConfig, tempDir, writeProject } from "../support/project.js";
import { call, useScriptedModel } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

const model = useScriptedModel();
const root = path.resolve(import.meta.dirname, "..", "..");

const AGENTS = {
  main: "---\nname: Main\n---\nYou plan in phases.",
  lister: "---\nname: Lister\ntodo_style: list\n---\nYou plan in lists.",
};
const KEY = "agent:main:http:p";

function config(store = "jsonl"): Record<string, unknown> {
  return {
    ...openaiConfig(model.server.url, { stream: false }),
    session: { store },
    tools: { todo: { enabled: true, style: "phases" }, ...DEFAULT_TOOLS_OFF },
  };
}

/** A gateway on the project folder `dir` (a second one on the same folder is the restart). */
const gateway = (dir: string, store?: string): Harness => harness({ dir, agents: AGENTS, config: config(store) });

const PLAN = [
  call("todo", {
    op: "init",
    list: [
      { phase: "A", items: ["a1", "a2"] },
      { phase: "B", items: ["b1"] },
    ],
  }),
  call("todo", { op: "done", task: "a1" }),
  call("todo", { op: "drop", task: "b1" }),
].join("\n");

type Message = { role: string; content: string };
/** The result the model got for the last todo call of the last request. */
const lastToolResult = () => (model.server.requests.at(-1)!.body.messages as Message[]).filter((m) => m.role === "tool").at(-1)!.content;

describe("a phases plan across a restart (in-process gateways on one session folder)", () => {
  it("a1 done, a2 open, b1 dropped comes back as a2 alone in the tool's view; /todo and the plan view still show a1 and b1", async () => {
    const dir = tempDir();
    const first = gateway(dir);
    await first.chat({ message: PLAN, session: "p" });
    // The plan rides on its tool result in the session file, never sent to a model.
    const kept = (await first.runtime.historyOf(KEY)).filter((m) => m.role === "tool");
    expect(kept.at(-1)).toMatchObject({ details: { storage: "session", phases: [{ name: "A" }, { name: "B" }] } });
    await first.chat({ message: "SAY next", session: "p" });
    expect(JSON.stringify(model.server.requests.at(-1)!.body.messages)).not.toContain('"details"');
    await first.runtime.close(0);

    const second = gateway(dir);
    expect(second.plans.size).toBe(0);
    await second.chat({ message: call("todo", { op: "view" }), session: "p" });
    const view = lastToolResult();
    expect(view).toContain("a2");
    expect(view).not.toContain("a1");
    expect(view).not.toContain("b1");
    expect(second.plans.read("main", KEY)).toEqual({ style: "phases", phases: [{ name: "A", tasks: [{ content: "a2", status: "in_progress" }] }] });
    expect((await second.chat({ message: "/todo", session: "p" })).json.reply).toBe("# A\n- [x] a1\n- [/] a2\n\n# B\n- [-] b1");
    expect((await jsonOf(await second.request(`/v1/sessions/${KEY}/todos`))).phases).toEqual([
      {
        name: "A",
        tasks: [
          { content: "a1", status: "completed" },
          { content: "a2", status: "in_progress" },
        ],
      },
      { name: "B", tasks: [{ content: "b1", status: "abandoned" }] },
    ]);
    // Once the plan changes, it is the plan as it is now.
    await second.chat({ message: call("todo", { op: "append", phase: "A", items: ["a3"] }), session: "p" });
    expect((await second.chat({ message: "/todo", session: "p" })).json.reply).toBe("# A\n- [/] a2\n- [ ] a3");
  });

  it("a plan the user wrote with /todo edit comes back too, and /clear wipes it for good", async () => {
    const dir = tempDir();
    const first = gateway(dir);
    await first.chat({ message: PLAN, session: "p" });
    await first.chat({ message: "/todo edit\n# Mine\n- [ ] m1\n- [x] m0", session: "p" });
    await first.runtime.close(0);
    const second = gateway(dir);
    await second.chat({ message: call("todo", { op: "view" }), session: "p" });
    expect(lastToolResult()).toContain("m1");
    expect(lastToolResult()).not.toContain("a2");
    await second.chat({ message: "/clear", session: "p" });
    await second.runtime.close(0);
    const third = gateway(dir);
    expect((await third.chat({ message: "/todo", session: "p" })).json.reply).toMatch(/^The plan is empty\./);
    await third.chat({ message: call("todo", { op: "view" }), session: "p" });
    expect(lastToolResult()).toBe("Todo list is empty.");
  });

  it("the list style stays in this process only, as PicoClaw's tool says", async () => {
    const dir = tempDir();
    const first = gateway(dir);
    await first.chat({ message: call("todo", { action: "write", todos: [{ id: "1", content: "l1" }] }), agent: "lister", session: "l" });
    await first.runtime.close(0);
    const second = gateway(dir);
    await second.chat({ message: call("todo", { action: "read" }), agent: "lister", session: "l" });
    expect(lastToolResult()).toBe('{"todos":[],"total_count":0,"message":"Retrieved 0 todos"}');
  });

  it('a session kept in memory only says storage "memory" and has nothing to come back', async () => {
    const dir = tempDir();
    const first = gateway(dir, "memory");
    await first.chat({ message: PLAN, session: "p" });
    expect((await first.runtime.historyOf(KEY)).filter((m) => m.role === "tool").at(-1)).toMatchObject({ details: { storage: "memory" } });
    await first.runtime.close(0);
    const second = gateway(dir, "memory");
    await second.chat({ message: call("todo", { op: "view" }), session: "p" });
    expect(lastToolResult()).toBe("Todo list is empty.");
  });
});

describe("the real gateway process", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  function start(project: string): { child: ChildProcess; output: { text: string } } {
    const child = spawn(process.execPath, [path.join(root, "dist", "main.js"), "gateway"], {
      cwd: project,
      env: { ...process.env, PICOCLAW_CONFIG: "", PICOCLAW_GATEWAY_PORT: "0", PICOCLAW_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const output = { text: "" };
    child.stdout!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output.text += chunk.toString()));
    return { child, output };
  }
  const url = async (output: { text: string }) => {
    await eventually(() => expect(output.text).toMatch(/listening on http:\/\/\S+/));
    return /listening on (http:\/\/\S+)/.exec(output.text)![1]!;
  };
  const chat = async (base: string, message: string) =>
    jsonOf(
      await fetch(`${base}/v1/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message, session: "p" }) }),
    );

  it("killed (SIGKILL) and started again on its session folder (store jsonl), the plan's open task is the plan again", { timeout: 60_000 }, async () => {
    const project = writeProject({ config: config(), agents: AGENTS });
    const first = start(project);
    await chat(await url(first.output), PLAN);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = start(project);
    const base = await url(second.output);
    const seen = model.server.requests.length;
    await chat(base, call("todo", { op: "view" }));
    const request: RecordedRequest = model.server.requests.at(-1)!;
    expect(model.server.requests.length).toBeGreaterThan(seen);
    const view = (request.body.messages as Message[]).filter((m) => m.role === "tool").at(-1)!.content;
    expect(view).toContain("a2");
    expect(view).not.toMatch(/a1|b1/);
    expect((await chat(base, "/todo")).reply).toBe("# A\n- [x] a1\n- [/] a2\n\n# B\n- [-] b1");
  });
});
