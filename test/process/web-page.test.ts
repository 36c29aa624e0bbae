/**
 * The chat page in a real browser (Debian's Chromium, headless), against the
 * real gateway process on a scripted fake model: what a person sees as a
 * turn streams, plans change, subagents run, the plan is edited and the
 * session cleared, and what arrives while they are idle.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageRig, answeredElsewhere, browserTests, startPageRig, viewOf } from "../support/browser.js";
import { call, openGate } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

/** A plugin tool whose result the user sees (not silent): its text, in capitals. */
const SHOUT = `import { defineTool, toolResult, z } from "picoclaw-ts";
export default defineTool({
  name: "shout",
  description: "Shows the user a text in capitals.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => toolResult.user(text.toUpperCase()),
});
`;

const { run, chromium } = browserTests();

describe.skipIf(!run)("the chat page in Chromium", () => {
  let rig: PageRig;
  const problems: string[] = [];

  beforeAll(async () => {
    rig = await startPageRig("web-page", chromium, {
      config: { tools: { todo: { enabled: true }, plugins: ["./tools/shout.js"] } },
      agents: {
        main: "---\nname: Main\ndescription: plans as a list\n---\nYou help.",
        planner: "---\nname: Planner\ndescription: plans in phases\ntodo_style: phases\n---\nYou plan.",
      },
      files: { "tools/shout.js": SHOUT },
    });
  });

  afterAll(async () => {
    await rig?.close();
  });

  /** A page on a session of its own; uncaught errors and CSP violations are collected (and must stay none). */
  async function open(session: string): Promise<Page> {
    const page = await rig.browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("pageerror", (error) => problems.push(`${session}: ${error.message}`));
    page.on("console", (message) => {
      if (/Content Security Policy|Trusted Type/i.test(message.text())) problems.push(`${session}: ${message.text()}`);
    });
    await page.goto(`${rig.gateway.url}/#${session}`);
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.locator("#message").fill(text);
    await page.locator("#message").press("Enter");
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });

  it("a turn streams in: tool chips, the plan after each change, the subagent line while it runs, tool output and the reply, in order", async () => {
    const page = await open("agent:main:http:list-plan");
    const write = (todos: unknown[]) => call("todo", { action: "write", todos });
    await send(
      page,
      [
        write([
          { id: "1", content: "Outline the talk", status: "in_progress" },
          { id: "2", content: "Write the slides" },
        ]),
        call("subagent", { task: "WAIT child-a\nSAY notes gathered", label: "research" }),
        write([
          { id: "1", content: "Outline the talk", status: "completed" },
          { id: "2", content: "Write the slides", status: "in_progress" },
        ]),
        call("shout", { text: "slides are next" }),
        "STREAM reply-a",
        "SAY The outline is done and the slides are under way.",
      ].join("\n"),
    );

    // The subagent runs: its line shows, the first plan is drawn, the chips say what ran and what runs.
    await eventually(async () => expect((await viewOf(page)).subagents).toEqual(["research"]));
    let view = await viewOf(page);
    expect(view.plan).toEqual([
      {
        phase: "Todos",
        tasks: [
          { text: "Outline the talk", status: "in_progress", checked: "mixed" },
          { text: "Write the slides", status: "pending", checked: "false" },
        ],
      },
    ]);
    expect(view.chips).toEqual([
      { name: "todo", status: "ok" },
      { name: "subagent", status: "running" },
    ]);
    expect(await page.locator("#stop").isVisible()).toBe(true);
    expect(await page.locator("#send").isDisabled()).toBe(true);
    await shot(page, "1-subagent-running");

    // It ends: its line goes, the plan moves on, the tool's output shows, and the reply starts to stream.
    openGate("child-a");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ kind: "agent", text: "The", streaming: true }));
    view = await viewOf(page);
    expect(view.subagents).toEqual([]);
    expect(view.plan[0]!.tasks.map((t) => [t.text, t.status, t.checked])).toEqual([
      ["Outline the talk", "completed", "true"],
      ["Write the slides", "in_progress", "mixed"],
    ]);
    expect(view.chips).toEqual([
      { name: "todo", status: "ok" },
      { name: "subagent", status: "ok" },
      { name: "todo", status: "ok" },
      { name: "shout", status: "ok" },
    ]);
    expect(await page.locator("#plan-count").textContent()).toBe("1/2");
    await shot(page, "2-reply-streaming");

    openGate("reply-a");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ streaming: false }));
    view = await viewOf(page);
    expect(view.transcript.map(({ kind, text }) => [kind, kind === "user" ? "…" : text])).toEqual([
      ["user", "…"],
      ["tools", expect.stringMatching(/^todo\s+ok\s+subagent\s+research\s+ok\s+todo\s+ok\s+shout\s+ok$/)],
      ["tool-output", "SLIDES ARE NEXT"],
      ["agent", "The outline is done and the slides are under way."],
    ]);
    // Silent results (the todo JSON, the subagent's answer) never reach the page.
    const shown = view.transcript.filter((item) => item.kind !== "user").map((item) => item.text);
    expect(shown.join("\n")).not.toMatch(/total_count|notes gathered|Subagent "research"/);
    // The composer is free once the answer is complete (its last event comes after the reply's delivery).
    await eventually(async () => expect(await page.locator("#send").isEnabled()).toBe(true));
    expect(await page.locator("#stop").isVisible()).toBe(false);
    // The event stream carried the same deliveries: each is shown once (checked once a later answer on the stream is shown).
    await answeredElsewhere(page, rig.gateway, { agent: "main", session: "list-plan" }, "/subagents");
    expect((await viewOf(page)).transcript.filter((item) => item.kind === "tool-output")).toHaveLength(1);
    await shot(page, "3-turn-done");

    // Reloaded, the session comes back from its history and its plan.
    await page.reload();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("The outline is done and the slides are under way."));
    // The plan is asked for on its own: it may come after the history.
    await eventually(async () => expect((await viewOf(page)).plan[0]?.tasks.map((t) => t.status)).toEqual(["completed", "in_progress"]));
    await page.close();
  });

  it("the phases style: each op redraws the panel, and /todo edit shows a bad line's error and changes nothing", async () => {
    const page = await open("agent:planner:http:phases");
    await send(
      page,
      [
        call("todo", {
          op: "init",
          list: [
            { phase: "Build", items: ["Write parser", "Add tests"] },
            { phase: "Ship", items: ["Release"] },
          ],
        }),
        "GATE phase-1",
        call("todo", { op: "done", task: "Write parser" }),
        "GATE phase-2",
        call("todo", { op: "drop", task: "Release" }),
        "SAY planned",
      ].join("\n"),
    );
    const tasks = async () => (await viewOf(page)).plan.map((phase) => [phase.phase, phase.tasks.map((t) => `${t.text}:${t.status}:${t.checked}`)]);
    await eventually(async () =>
      expect(await tasks()).toEqual([
        ["Build", ["Write parser:in_progress:mixed", "Add tests:pending:false"]],
        ["Ship", ["Release:pending:false"]],
      ]),
    );
    await shot(page, "4-phases-init");
    openGate("phase-1");
    await eventually(async () =>
      expect(await tasks()).toEqual([
        ["Build", ["Write parser:completed:true", "Add tests:in_progress:mixed"]],
        ["Ship", ["Release:pending:false"]],
      ]),
    );
    openGate("phase-2");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ kind: "agent", text: "planned" }));
    expect(await tasks()).toEqual([
      ["Build", ["Write parser:completed:true", "Add tests:in_progress:mixed"]],
      ["Ship", ["Release:abandoned:false"]],
    ]);

    // The editor opens with the plan as Markdown.
    await page.locator("#plan-editor summary").click();
    await eventually(async () =>
      expect(await page.locator("#plan-markdown").inputValue()).toBe("# Build\n- [x] Write parser\n- [/] Add tests\n\n# Ship\n- [-] Release"),
    );
    // A bad line: its error shows under the box, and the plan stays as it was.
    await page.locator("#plan-markdown").fill("# Build\n- [x] Write parser\n- [?] Add tests");
    await page.locator("#plan-save").click();
    await eventually(async () => expect(await page.locator("#plan-result").textContent()).toMatch(/^Nothing changed:\nLine 3: /));
    expect(await page.locator("#plan-result").getAttribute("class")).toContain("error");
    expect((await tasks())[1]).toEqual(["Ship", ["Release:abandoned:false"]]);
    await shot(page, "5-todo-edit-error");
    // A good one replaces the plan (Ctrl+Enter saves), and the panel redraws.
    await page.locator("#plan-markdown").fill("# Build\n- [x] Write parser\n- [x] Add tests\n\n# Ship\n- [ ] Release");
    await page.locator("#plan-markdown").press("Control+Enter");
    await eventually(async () =>
      expect(await tasks()).toEqual([
        ["Build", ["Write parser:completed:true", "Add tests:completed:true"]],
        ["Ship", ["Release:in_progress:mixed"]],
      ]),
    );
    // The panel redraws on plan.updated, which may come before the command's own answer.
    await eventually(async () => expect(await page.locator("#plan-result").textContent()).toBe("Saved: 2 phases, 3 tasks."));
    // The editor's commands are the panel's business, not the conversation's.
    const transcript = (await viewOf(page)).transcript.map((item) => item.text).join("\n");
    expect(transcript).not.toMatch(/Plan updated|Nothing changed/);
    await shot(page, "6-todo-edit-saved");
    await page.close();
  });

  it("Clear empties the view, and the session stays empty after a reload", async () => {
    const page = await open("agent:main:http:to-clear");
    await send(page, [call("todo", { action: "write", todos: [{ id: "1", content: "Something to forget" }] }), "SAY noted"].join("\n"));
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("noted"));
    expect((await viewOf(page)).planEmpty).toBe(false);
    // Clear is only taken once the message's answer is complete (the composer is free), which comes a little after its text.
    await eventually(async () => expect(await page.locator("#send").isEnabled()).toBe(true));
    await page.locator("#clear").click();
    await eventually(async () => expect((await viewOf(page)).status).toMatch(/^Cleared/));
    let view = await viewOf(page);
    // Only the first screen's card is left.
    expect(view.transcript.map((item) => item.kind)).toEqual(["welcome"]);
    expect(view.plan).toEqual([]);
    expect(view.planEmpty).toBe(true);
    await shot(page, "7-cleared");
    await page.reload();
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    view = await viewOf(page);
    expect(view.transcript.map((item) => item.kind)).toEqual(["welcome"]);
    expect(view.planEmpty).toBe(true);
    await page.close();
  });

  it("while the person is idle, a background subagent's answer arrives on the session's stream, once", async () => {
    const page = await open("agent:main:http:background");
    await send(page, [call("spawn", { task: "WAIT background-1\nSAY the background work is finished", label: "later" }), "SAY I started it."].join("\n"));
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("I started it."));
    expect((await viewOf(page)).subagents).toEqual(["later"]);
    await eventually(async () => expect(await page.locator("#send").isEnabled()).toBe(true));
    openGate("background-1");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ kind: "agent", text: "the background work is finished" }));
    await eventually(async () => expect((await viewOf(page)).subagents).toEqual([]));
    await answeredElsewhere(page, rig.gateway, { agent: "main", session: "background" }, "/subagents");
    expect((await viewOf(page)).transcript.filter((item) => item.text === "the background work is finished")).toHaveLength(1);
    await shot(page, "8-background-delivery");
    await page.close();
  });

  it("text from the model is shown as text, never run as HTML", async () => {
    const page = await open("agent:main:http:markup");
    await send(page, 'SAY <img src=x onerror="window.pwned=1"><b>bold?</b>');
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe('<img src=x onerror="window.pwned=1"><b>bold?</b>'));
    expect(await page.locator("#transcript img, #transcript b").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    await page.close();
  });

  it("a failed todo call marks the plan panel 'Todo update failed' until the next successful call redraws it", async () => {
    const page = await open("agent:planner:http:stale");
    await send(
      page,
      [
        call("todo", { op: "init", items: ["a1", "a2"] }),
        "GATE stale-1",
        call("todo", { op: "done", task: "nope" }),
        "GATE stale-2",
        call("todo", { op: "done", task: "a1" }),
        "SAY fixed",
      ].join("\n"),
    );
    const stale = page.locator("#plan-stale");
    await eventually(async () => expect((await viewOf(page)).plan[0]?.tasks.map((t) => t.status)).toEqual(["in_progress", "pending"]));
    expect(await stale.isVisible()).toBe(false);
    openGate("stale-1");
    await eventually(async () => expect(await stale.isVisible()).toBe(true));
    expect(await stale.textContent()).toMatch(/^Todo update failed: the plan did not change, so the plan shown may be stale/);
    // The plan drawn stays as it was, beneath the mark.
    expect((await viewOf(page)).plan[0]!.tasks.map((t) => t.status)).toEqual(["in_progress", "pending"]);
    await shot(page, "9-todo-failed");
    openGate("stale-2");
    await eventually(async () => expect((await viewOf(page)).plan[0]!.tasks.map((t) => t.status)).toEqual(["completed", "in_progress"]));
    expect(await stale.isVisible()).toBe(false);
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ kind: "agent", text: "fixed" }));
  });

  it("no page had an uncaught error or a Content-Security-Policy violation", () => {
    expect(problems).toEqual([]);
  });
});
