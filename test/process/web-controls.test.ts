/**
 * The chat page's controls in a real browser (Debian's Chromium, headless),
 * against the real gateway process on a scripted fake model: the session
 * list and the agent picker, the keyboard, and Stop for a running turn and
 * for a subagent running in the background.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageRig, answeredElsewhere, browserTests, startPageRig, viewOf } from "../support/browser.js";
import { call, openGate } from "../support/scripted-openai.js";
import { eventually, within } from "../support/wait.js";

const { run, chromium } = browserTests();

describe.skipIf(!run)("the chat page's controls in Chromium", () => {
  let rig: PageRig;
  const problems: string[] = [];

  beforeAll(async () => {
    rig = await startPageRig("web-controls", chromium, {
      agents: {
        main: "---\nname: Main\ndescription: the everyday one\n---\nYou help.",
        planner: "---\nname: Planner\ndescription: plans things\n---\nYou plan.",
      },
    });
  });

  afterAll(async () => {
    await rig?.close();
  });

  async function open(hash = ""): Promise<Page> {
    const page = await rig.browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${rig.gateway.url}/${hash}`);
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });

  /** A message to the gateway as any client sends it. */
  async function chat(agent: string, session: string, message: string): Promise<void> {
    const res = await fetch(`${rig.gateway.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent, session, message }),
    });
    expect(res.status).toBe(200);
  }

  /** The session list as drawn: each entry's name and the line under it; and the one marked open. */
  const sessionList = (page: Page) =>
    page.evaluate(() => {
      const d = (
        globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ textContent: string | null; getAttribute(n: string): string | null }> } }
      ).document;
      return [...d.querySelectorAll("#session-list .session")].map((entry) => ({
        text: entry.textContent ?? "",
        current: entry.getAttribute("aria-current") === "true",
      }));
    });

  it("the session list shows the gateway's sessions newest first, marks the open one, opens another with its history, and moves a session that just talked to the top; the agent picker goes to that agent's newest session", async () => {
    await chat("main", "groceries", "SAY milk and eggs");
    await chat("planner", "trip", "SAY pack light");
    // Opened without a session named, the page opens the newest web session.
    const page = await open();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("pack light"));
    expect(await page.locator("#agent").inputValue()).toBe("planner");
    expect(await page.locator("#session-title").textContent()).toBe("trip");
    expect(await sessionList(page)).toEqual([
      { text: "tripplanner · 2 msg · just now", current: true },
      { text: "groceriesmain · 2 msg · just now", current: false },
    ]);
    await shot(page, "1-session-list");

    await page.locator("#session-list .session", { hasText: "groceries" }).click();
    await eventually(async () => expect((await viewOf(page)).transcript.map((item) => item.text)).toEqual(["SAY milk and eggs", "milk and eggs"]));
    expect(page.url()).toMatch(/#agent:main:http:groceries$/);
    expect(await page.locator("#agent").inputValue()).toBe("main");
    expect((await sessionList(page)).map((entry) => entry.current)).toEqual([false, true]);

    await page.locator("#message").fill("SAY and bread");
    await page.locator("#message").press("Enter");
    await eventually(async () =>
      expect(await sessionList(page)).toEqual([
        { text: "groceriesmain · 4 msg · just now", current: true },
        { text: "tripplanner · 2 msg · just now", current: false },
      ]),
    );

    await page.locator("#agent").selectOption("planner");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("pack light"));
    expect(page.url()).toMatch(/#agent:planner:http:trip$/);
    await page.close();
  });

  it("Enter sends; Shift+Enter starts a new line and sends nothing", async () => {
    const page = await open("#agent:main:http:keys");
    await page.locator("#message").click();
    await page.keyboard.type("SAY first line");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("SAY second line");
    expect(await page.locator("#message").inputValue()).toBe("SAY first line\nSAY second line");
    // Nothing was sent: the empty session still shows its first screen only.
    expect((await viewOf(page)).transcript.map((item) => item.kind)).toEqual(["welcome"]);
    await page.keyboard.press("Enter");
    await eventually(async () =>
      expect((await viewOf(page)).transcript.map(({ kind, text }) => [kind, text])).toEqual([
        ["user", "SAY first line\nSAY second line"],
        ["agent", "second line"],
      ]),
    );
    expect(await page.locator("#message").inputValue()).toBe("");
    await page.close();
  });

  it("an agent without the todo tool (the default config's) keeps no plan: the panel says so and offers no Markdown editor", async () => {
    const page = await open("#agent:main:http:no-plan");
    expect(await page.locator("#plan-empty").textContent()).toBe("This agent has no todo tool, so it keeps no plan.");
    expect(await page.locator("#plan-editor").isVisible()).toBe(false);
    await page.close();
  });

  it("Stop ends a running turn: the page says it was stopped, and the composer is free again", async () => {
    const page = await open("#agent:main:http:stop-turn");
    await page.locator("#message").fill("WAIT turn-to-stop\nSAY too late");
    await page.locator("#message").press("Enter");
    await eventually(async () => expect((await viewOf(page)).status).toBe("working…"));
    expect(await page.locator("#send").isDisabled()).toBe(true);
    expect(await page.locator("#stop").isVisible()).toBe(true);
    await shot(page, "2-turn-running");
    await page.locator("#stop").click();
    // The message's answer says it was stopped, once.
    await eventually(async () =>
      expect((await viewOf(page)).transcript.map(({ kind, text }) => [kind, text])).toEqual([
        ["user", "WAIT turn-to-stop\nSAY too late"],
        ["command", "Stopped by /stop before it was answered; this message is not kept in the history."],
      ]),
    );
    expect(await page.locator("#send").isEnabled()).toBe(true);
    expect(await page.locator("#stop").isVisible()).toBe(false);
    openGate("turn-to-stop");
    // A later turn on the session waits for the stopped one to be over: once its answer is shown, a late reply would have been too.
    const later = await answeredElsewhere(page, rig.gateway, { agent: "main", session: "stop-turn" }, "SAY after the stop");
    expect((await viewOf(page)).transcript.filter((item) => item.text !== later)).toHaveLength(2);
    await shot(page, "3-turn-stopped");
    await page.close();
  });

  it("a subagent running in the background shows its label with a Stop button, which stops it: its line goes and its answer never comes", async () => {
    const page = await open("#agent:main:http:stop-child");
    await page
      .locator("#message")
      .fill([call("spawn", { task: "WAIT child-to-stop\nSAY the child's late answer", label: "long job" }), "SAY started"].join("\n"));
    await page.locator("#message").press("Enter");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("started"));
    expect((await viewOf(page)).subagents).toEqual(["long job"]);
    expect(await page.locator("#subagents-stop").isVisible()).toBe(true);
    await shot(page, "4-subagent-with-stop");
    await page.locator("#subagents-stop").click();
    await eventually(async () => expect((await viewOf(page)).subagents).toEqual([]));
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("Stopped, along with 1 subagent."));
    expect(await page.locator("#subagents-stop").isVisible()).toBe(false);
    openGate("child-to-stop");
    // The child's model call was hung up when it was stopped, so no answer to it is on its way; and once a later
    // answer on the session's stream is shown, whatever was delivered before it has been shown too.
    const childCall = rig.model.requests.find((r) => r.body.messages.length === 2 && String(r.body.messages[1].content).includes("\nWAIT child-to-stop"))!;
    expect(await within("the fake model to see the stopped child's call hang up", childCall.closed)).toEqual({ complete: false });
    await answeredElsewhere(page, rig.gateway, { agent: "main", session: "stop-child" }, "/subagents");
    const shown = (await viewOf(page)).transcript.filter((item) => item.kind !== "user");
    expect(shown.map((item) => item.text).join("\n")).not.toMatch(/late answer/);
    await shot(page, "5-subagent-stopped");
    await page.close();
  });

  it("a chat app's session opened by its key is shown, and answered there: the composer is off and says why", async () => {
    const page = await open("#agent:main:telegram:12345");
    expect(await page.locator("#session-title").textContent()).toBe("telegram: 12345");
    expect(await page.locator("#message").isDisabled()).toBe(true);
    expect(await page.locator("#readonly-note").textContent()).toBe("This conversation belongs to the telegram channel: it is shown here, and answered there.");
    await page.close();
  });

  it("no page had an uncaught error", () => {
    expect(problems).toEqual([]);
  });
});
