// biome-ignore-all lint/performance/useDomNodeTextContent: the cards' text as rendered (what a person sees) is the point
/**
 * What waits for the person, on the chat page in a real browser (Debian's
 * Chromium, headless), against the real gateway process on a scripted fake
 * model: an exec call under the default approval "ask" is a card with its
 * arguments, Allow / Deny / Allow for this session and the time left;
 * Allow runs it, Deny does not; a card decided elsewhere (the API) goes;
 * a reload shows what still waits. An ask_user question is a card with its
 * options as buttons, and a press answers it.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageRig, browserTests, startPageRig, viewOf } from "../support/browser.js";
import { jsonOf } from "../support/project.js";
import { call } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

const { run, chromium } = browserTests();

/** The cards as drawn (the text as rendered, what a person sees): kind, text, buttons, the time left. */
const cardsOf = (page: Page) =>
  page.evaluate(() => {
    const d = (
      globalThis as unknown as {
        document: {
          querySelectorAll(s: string): Iterable<{
            classList: { contains(c: string): boolean };
            innerText: string;
            checkVisibility(): boolean;
            querySelector(s: string): { innerText: string } | null;
            querySelectorAll(s: string): Iterable<{ innerText: string }>;
          }>;
        };
      }
    ).document;
    return [...d.querySelectorAll("#asks .ask")]
      .filter((card) => card.checkVisibility())
      .map((card) => ({
        kind: card.classList.contains("approval") ? "approval" : "question",
        title: card.querySelector(".ask-title")?.innerText ?? "",
        body: (card.querySelector(".ask-args") ?? card.querySelector(".ask-question"))?.innerText ?? "",
        buttons: [...card.querySelectorAll("button")].map((b) => b.innerText),
        time: card.querySelector(".ask-time")?.innerText ?? "",
      }));
  });

describe.skipIf(!run)("approvals and questions on the chat page in Chromium", () => {
  let rig: PageRig;
  const problems: string[] = [];

  beforeAll(async () => {
    rig = await startPageRig("web-asks", chromium, {});
  });

  afterAll(async () => {
    expect(problems).toEqual([]);
    await rig?.close();
  });

  async function open(session: string): Promise<Page> {
    const page = await rig.browser.newPage({ viewport: { width: 1100, height: 800 } });
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${rig.gateway.url}/#agent:main:http:${session}`);
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });

  const send = async (page: Page, text: string) => {
    await page.locator("#message").fill(text);
    await page.locator("#message").press("Enter");
  };

  it("an exec call shows a card with its command, the three choices and the time left; Allow runs it and the card goes", async () => {
    const page = await open("allow");
    await send(page, call("exec", { action: "run", command: "echo allowed > allowed.txt" }));
    await eventually(async () => expect(await cardsOf(page)).toHaveLength(1));
    const [card] = await cardsOf(page);
    expect(card).toMatchObject({ kind: "approval", title: "exec wants to run", buttons: ["Allow", "Deny", "Allow for this session"] });
    expect(card!.body).toContain('"command": "echo allowed > allowed.txt"');
    expect(card!.time).toMatch(/^[45]:\d\d left$/);
    await shot(page, "1-approval-card");
    await page.locator("#asks button", { hasText: /^Allow$/ }).click();
    await eventually(async () => expect(await cardsOf(page)).toEqual([]));
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toMatch(/^done: /));
    await shot(page, "2-allowed");
    const history = await jsonOf(await fetch(`${rig.gateway.url}/v1/sessions/agent:main:http:allow/history`));
    const records = history.messages.filter((m: { record?: unknown }) => m.record);
    expect(records.map((m: { record: { decision: string; by: string } }) => [m.record.decision, m.record.by])).toEqual([["allow", "page"]]);
    const tool = history.messages.find((m: { role: string }) => m.role === "tool");
    expect(tool.is_error).toBeUndefined();
  });

  it("Deny runs nothing; a card decided elsewhere goes, and a reload shows what still waits", async () => {
    const page = await open("deny");
    await send(page, call("exec", { action: "run", command: "touch denied.txt" }));
    await eventually(async () => expect(await cardsOf(page)).toHaveLength(1));
    await page.locator("#asks button", { hasText: "Deny" }).click();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toMatch(/The user declined to run exec/));
    expect(await cardsOf(page)).toEqual([]);

    // A request the page did not make: shown after a reload too, and gone when the API decides it.
    const other = fetch(`${rig.gateway.url}/v1/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session: "deny", message: call("exec", { action: "run", command: "echo from elsewhere" }) }),
    });
    await eventually(async () => expect(await cardsOf(page)).toHaveLength(1));
    await page.reload();
    await eventually(async () => expect(await cardsOf(page)).toHaveLength(1));
    const waiting = (await jsonOf(await fetch(`${rig.gateway.url}/v1/sessions/agent:main:http:deny/approvals`))).approvals;
    const res = await fetch(`${rig.gateway.url}/v1/sessions/agent:main:http:deny/approvals/${waiting[0].id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "deny" }),
    });
    expect(res.status).toBe(200);
    await eventually(async () => expect(await cardsOf(page)).toEqual([]));
    expect((await other).status).toBe(200);
  });

  it("an ask_user question shows its options as buttons; a press answers it and the turn goes on", async () => {
    const page = await open("question");
    await send(page, call("ask_user", { question: "Which file?", options: ["notes.md", "todo.md"] }));
    await eventually(async () => expect(await cardsOf(page)).toHaveLength(1));
    expect((await cardsOf(page))[0]).toMatchObject({ kind: "question", body: "Which file?", buttons: ["notes.md", "todo.md"] });
    // The composer takes an answer while the turn runs.
    expect(await page.locator("#send").isDisabled()).toBe(false);
    await shot(page, "3-question-card");
    await page.locator("#asks button", { hasText: "todo.md" }).click();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toMatch(/The user answered: todo\.md/));
    expect(await cardsOf(page)).toEqual([]);
    await shot(page, "4-answered");
  });
});
