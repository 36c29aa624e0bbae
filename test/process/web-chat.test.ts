/**
 * The chat page as a person reads it, in Chromium against the real gateway:
 * replies drawn as Markdown (and hostile Markdown kept inert), a transcript
 * that keeps up with tall streamed replies, the first screen of an empty
 * session on the built-in model, a reload that shows what was seen, Retry
 * on a failed message, the plan editor keeping phases and showing priority.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APPROVED_TEXT } from "../../src/channels/pairing.js";
import { type PageRig, answeredElsewhere, browserTests, startPageRig, viewOf } from "../support/browser.js";
import { FakeBotApi } from "../support/fake-telegram.js";
import { call } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

/** A plugin tool whose result the user sees (not silent): the text it is given, as it is. */
const SHOW = `import { defineTool, toolResult, z } from "picoclaw-ts";
export default defineTool({
  name: "show",
  description: "Shows the user a text.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => toolResult.user(text),
});
`;

// The built-in model answers "You said: " and the message: the Markdown starts on the line after.
const MARKDOWN = [
  "Here it is:",
  "",
  "## Packing list",
  "",
  "1. **boots** and *socks*",
  "2. a `map`",
  "",
  "| item | weight |",
  "| --- | --- |",
  "| tent | 2 kg |",
  "",
  "```python",
  "print('ready')",
  "```",
  "",
  "See [the guide](https://example.com/guide).",
].join("\n");

// What the functions handed to the page use of its globals (the tests' type-check has no DOM).
declare const window: { pwned?: string; lengths?: number[] };
declare const document: { querySelector(selector: string): { textContent: string | null } | null; getElementById(id: string): object | null };
declare const MutationObserver: new (callback: () => void) => { observe(target: object, options: object): void };
declare const getComputedStyle: (element: object) => { fontFamily: string };
declare const navigator: { clipboard: { readText(): Promise<string> } };

const { run, chromium } = browserTests();

describe.skipIf(!run)("the chat page reads well (Chromium)", () => {
  let rig: PageRig;
  let telegram: FakeBotApi;
  const problems: string[] = [];
  const TELEGRAM_TOKEN = "123456:WEBCHAT-secret_token-abc";

  beforeAll(async () => {
    telegram = await FakeBotApi.start(TELEGRAM_TOKEN);
    rig = await startPageRig("web-chat", chromium, {
      config: {
        channel_list: [{ type: "telegram", token: TELEGRAM_TOKEN, allow_from: [], api_root: telegram.url, dm_policy: "pairing" }],
        tools: { plugins: ["./tools/show.js"], todo: { enabled: true } },
        model_list: [{ model_name: "local", provider: "builtin", model: "scripted" }],
      },
      agents: {
        main: "---\nname: Main\ndescription: on the scripted model\n---\nYou help.",
        offline: "---\nname: Offline helper\ndescription: on the built-in model\nmodel: local\ntools: [subagent, list_dir, show]\n---\nYou help.",
        planner: "---\nname: Planner\ntodo_style: phases\n---\nYou plan.",
        lister: "---\nname: Lister\n---\nYou list.",
      },
      files: { "tools/show.js": SHOW },
    });
  });

  afterAll(async () => {
    await rig?.close();
    await telegram?.close();
    expect(problems.join("\n")).toBe("");
  });

  /** A page on a session; uncaught errors and CSP or Trusted Types violations are collected (and must stay none). */
  async function open(session: string, viewport = { width: 1280, height: 860 }, config: Record<string, unknown> = {}): Promise<Page> {
    const context = await rig.browser.newContext({ viewport, ...config });
    const page = await context.newPage();
    page.on("pageerror", (error) => problems.push(`${session}: ${error.message}`));
    page.on("console", (message) => {
      if (/Content Security Policy|Trusted Type/i.test(message.text())) problems.push(`${session}: ${message.text()}`);
    });
    page.on("dialog", (dialog) => {
      problems.push(`${session}: a dialog opened: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(`${rig.gateway.url}/#${session}`);
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  async function send(page: Page, text: string): Promise<void> {
    await page.locator("#message").fill(text);
    await page.locator("#message").press("Enter");
  }

  /** The page's own message is answered whole: nothing streams, the composer is free. */
  async function settled(page: Page): Promise<void> {
    await eventually(async () => {
      expect((await viewOf(page)).transcript.some((item) => item.streaming)).toBe(false);
      expect(await page.locator("#send").isEnabled()).toBe(true);
    });
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });
  const lastAgentText = async (page: Page) => (await viewOf(page)).transcript.filter((item) => item.kind === "agent").at(-1)?.text ?? "";

  it("an empty session greets with the agent and its model; on the built-in model its examples send with one click, and the answer streams in pieces", async () => {
    const page = await open("agent:offline:http:first");
    const card = page.locator("#transcript > li.welcome");
    await expect(card.locator("h2").textContent()).resolves.toBe("Hello, this is Offline helper");
    const text = await card.textContent();
    expect(text).toContain("Model: local (builtin)");
    expect(text).toContain("built-in offline model");
    expect(text).toContain("CALL <tool> <json arguments>");
    expect(text).toContain("PICOCLAW_TOOLS_TODO_ENABLED=true");
    const examples = await card.locator("button.try code").allInnerTexts();
    expect(examples).toContain('CALL subagent {"task":"say hello","label":"demo"}');
    await shot(page, "1-first-screen");
    // Every length the streaming reply is drawn at, from the page itself.
    await page.evaluate(() => {
      const seen: number[] = [];
      window.lengths = seen;
      new MutationObserver(() => {
        const draft = document.querySelector("#transcript li.agent.streaming .text");
        if (draft && seen.at(-1) !== draft.textContent!.length) seen.push(draft.textContent!.length);
      }).observe(document.getElementById("transcript")!, { subtree: true, childList: true, characterData: true });
    });
    await card
      .locator("button.try")
      .filter({ has: page.getByText("Say hello", { exact: true }) })
      .click();
    await eventually(async () => expect(await lastAgentText(page)).toMatch(/^You said: Hello! What can you do\?/));
    expect((await viewOf(page)).transcript.map((item) => item.kind)).toEqual(["user", "agent"]);
    const lengths = await page.evaluate(() => window.lengths ?? []);
    // Drawn while it grew (how often depends on the machine's load: at least once before it was whole), never shrinking.
    expect(lengths.length).toBeGreaterThan(1);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    await page.context().close();
  });

  it("draws replies and text tool output as Markdown: headings, lists, tables, code with its language and a copy button, links that open safely; JSON output as a code block", async () => {
    const page = await open("agent:offline:http:markdown", { width: 1280, height: 900 }, { permissions: ["clipboard-read", "clipboard-write"] });
    await send(page, MARKDOWN);
    await eventually(async () => expect(await lastAgentText(page)).toContain("Packing list"));
    await settled(page);
    const reply = page.locator("#transcript li.agent .md").last();
    expect(await reply.locator("h2").textContent()).toBe("Packing list");
    expect(await reply.locator("ol > li").allInnerTexts()).toEqual(["boots and socks", "a map"]);
    expect(await reply.locator("strong").textContent()).toBe("boots");
    expect(await reply.locator("table th").allInnerTexts()).toEqual(["item", "weight"]);
    expect(await reply.locator(".code-block .lang").textContent()).toBe("python");
    expect((await reply.locator(".code-block pre code").textContent())?.trimEnd()).toBe("print('ready')");
    const font = await reply.locator(".code-block pre code").evaluate((element) => getComputedStyle(element).fontFamily);
    expect(font).toMatch(/mono/i);
    const link = reply.locator("a", { hasText: "the guide" });
    expect(await link.getAttribute("href")).toBe("https://example.com/guide");
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await link.getAttribute("target")).toBe("_blank");
    await reply.locator(".code-block button.copy").click();
    await eventually(async () => expect(await reply.locator(".code-block button.copy").textContent()).toBe("Copied"));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("print('ready')");
    await shot(page, "2-markdown");

    await send(page, [call("show", { text: "**bold** tool text\n\n- a\n- b" }), call("show", { text: '{"todos":[{"content":"**milk**"}]}' })].join("\n"));
    await eventually(async () => expect((await viewOf(page)).transcript.filter((item) => item.kind === "tool-output")).toHaveLength(2));
    const outputs = page.locator("#transcript li.tool-output .md");
    expect(await outputs.nth(0).locator("strong").textContent()).toBe("bold");
    expect(await outputs.nth(0).locator("ul > li").allInnerTexts()).toEqual(["a", "b"]);
    // JSON is data: shown as code, its ** untouched.
    expect(await outputs.nth(1).locator(".code-block .lang").textContent()).toBe("json");
    expect(await outputs.nth(1).locator("pre code").textContent()).toContain('"content": "**milk**"');
    expect(await outputs.nth(1).locator("strong").count()).toBe(0);
    await shot(page, "3-tool-output");
    await page.context().close();
  });

  it("a reply carrying <script>, <img onerror>, an <svg onload>, javascript: and data: links runs nothing, and shows the HTML as text", async () => {
    const page = await open("agent:offline:http:xss");
    const payload = [
      "<script>window.pwned = 'script'</script>",
      '<img src="x" onerror="window.pwned = \'img\'">',
      "<svg onload=\"window.pwned = 'svg'\"></svg>",
      "[click me](javascript:window.pwned='link')",
      "[CLICK](JaVaScRiPt:window.pwned='link2')",
      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
      "![pic](https://example.com/p.png)",
      "<a href=\"javascript:window.pwned='a'\">raw link</a>",
    ].join("\n\n");
    await send(page, payload);
    await eventually(async () => expect(await lastAgentText(page)).toContain("click me"));
    await settled(page);
    const reply = page.locator("#transcript li.agent .md").last();
    // Clicking what looks like a link does nothing either.
    for (const name of ["click me", "CLICK", "data"]) await reply.getByText(name, { exact: true }).click();
    const found = await reply.evaluate((element) => ({
      pwned: window.pwned,
      dangerous: element.querySelectorAll("script, img, svg, iframe, object, embed, [onerror], [onload]").length,
      hrefs: [...element.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")),
      text: element.textContent ?? "",
    }));
    expect(found.pwned).toBeUndefined();
    expect(found.dangerous).toBe(0);
    // Only the picture's http(s) address stays a link target (an image is never loaded: it is a link).
    expect(found.hrefs).toEqual(["https://example.com/p.png"]);
    expect(found.text).toContain("<script>window.pwned = 'script'</script>");
    expect(found.text).toContain("<a href=\"javascript:window.pwned='a'\">raw link</a>");
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
    await shot(page, "4-xss-inert");
    await page.context().close();
  });

  it("follows tall streamed replies while the reader is at the end; scrolled up, it stays put and New messages brings them down", async () => {
    const page = await open("agent:offline:http:tall", { width: 390, height: 844 });
    const list = page.locator("#transcript");
    const gap = () => list.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight);
    const tall = (n: number) => Array.from({ length: 30 }, (_, i) => `line ${i + 1} of tall message ${n}`).join("\n");
    for (let n = 1; n <= 5; n++) {
      await send(page, tall(n));
      await eventually(async () => expect(await lastAgentText(page)).toContain(`line 30 of tall message ${n}`));
      await eventually(async () => expect(await page.locator("#send").isEnabled()).toBe(true));
      expect(await gap()).toBeLessThanOrEqual(2);
    }
    expect(await list.evaluate((element) => element.scrollHeight > element.clientHeight * 4)).toBe(true);
    await shot(page, "5-followed");
    // The reader scrolls up to message 2: what arrives now stays below them.
    await list.evaluate((element) => element.scrollTo({ top: element.scrollHeight / 3 }));
    await eventually(async () => expect(await gap()).toBeGreaterThan(100));
    const top = await list.evaluate((element) => element.scrollTop);
    expect(await page.locator("#new-messages").isVisible()).toBe(false);
    await answeredElsewhere(page, rig.gateway, { agent: "offline", session: "tall" }, tall(6));
    expect(await list.evaluate((element) => element.scrollTop)).toBe(top);
    await eventually(async () => expect(await page.locator("#new-messages").isVisible()).toBe(true));
    await shot(page, "6-new-messages");
    await page.locator("#new-messages").click();
    await eventually(async () => expect(await gap()).toBeLessThanOrEqual(2));
    expect(await page.locator("#new-messages").isVisible()).toBe(false);
    await page.context().close();
  });

  it("a reload shows what the person saw: tool outputs in their places and the calls between them in one row of chips, subagents named", async () => {
    const page = await open("agent:main:http:reload");
    await send(
      page,
      [
        call("show", { text: "first **output**" }),
        call("subagent", { task: "SAY child done", label: "research" }),
        call("todo", { action: "read" }),
        call("show", { text: "second output" }),
        "SAY all done",
      ].join("\n"),
    );
    await eventually(async () => expect(await lastAgentText(page)).toBe("all done"));
    const rows = async () =>
      (await viewOf(page)).transcript.map((item) => [
        item.kind,
        item.kind === "tools" ? item.text.replace(/\s+(ok|done|error)\b/g, "").replace(/\s+/g, " ") : item.text,
      ]);
    const live = await rows();
    expect(live).toEqual([
      ["user", expect.any(String)],
      ["tools", "show"],
      ["tool-output", "first output"],
      ["tools", "subagent research todo show"],
      ["tool-output", "second output"],
      ["agent", "all done"],
    ]);
    await page.reload();
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    expect(await rows()).toEqual(live);
    expect(await page.locator("#transcript li.tool-output strong").first().textContent()).toBe("output");
    await shot(page, "7-after-reload");
    await page.context().close();
  });

  it("a message that could not be sent has Retry, which sends it again, and the banner that said so goes", async () => {
    const page = await open("agent:main:http:retry");
    await page.route("**/v1/chat", (route) => route.abort("connectionrefused"));
    await send(page, "SAY it worked the second time");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.kind).toBe("error"));
    expect(await page.locator("#banner").isVisible()).toBe(true);
    expect(await page.locator("#banner").textContent()).toContain("The gateway is not answering.");
    await shot(page, "8-error-retry");
    await page.unroute("**/v1/chat");
    await page.locator("#transcript li.error button.retry").click();
    await eventually(async () => expect(await lastAgentText(page)).toBe("it worked the second time"));
    expect(await page.locator("#banner").isVisible()).toBe(false);
    await page.context().close();
  });

  it("the plan editor keeps phases, shows no ids, says what it saved; a list shows priorities and says which headings it could not keep", async () => {
    const page = await open("agent:planner:http:phases");
    await page.locator("#plan-editor summary").click();
    // An empty plan: the box is empty, with an example to follow.
    expect(await page.locator("#plan-markdown").inputValue()).toBe("");
    expect(await page.locator("#plan-markdown").getAttribute("placeholder")).toContain("# A phase");
    await page.locator("#plan-markdown").fill("# Research\n- [x] Read the docs\n- [/] Try the API\n\n# Build\n- [ ] Write the code");
    await page.locator("#plan-save").click();
    await eventually(async () => expect(await page.locator("#plan-result").textContent()).toBe("Saved: 2 phases, 3 tasks."));
    // The panel shows the plan from the session's event stream, which may come after the editor's answer.
    await eventually(async () =>
      expect((await viewOf(page)).plan.map((phase) => [phase.phase, phase.tasks.map((task) => task.text)])).toEqual([
        ["Research", ["Read the docs", "Try the API"]],
        ["Build", ["Write the code"]],
      ]),
    );
    expect(await page.locator("#plan-markdown").inputValue()).toBe("# Research\n- [x] Read the docs\n- [/] Try the API\n\n# Build\n- [ ] Write the code");
    await shot(page, "9-phases-kept");
    await page.context().close();

    const list = await open("agent:lister:http:list", { width: 390, height: 844 });
    await send(
      list,
      call("todo", {
        action: "write",
        todos: [
          { id: "1", content: "Book the train", priority: "high" },
          { id: "2", content: "Pack", status: "in_progress" },
        ],
      }),
    );
    await eventually(async () => expect(await list.locator("#plan .priority").allInnerTexts()).toEqual(["high"]));
    await list.locator("#toggle-side").click();
    await list.locator("#plan-editor summary").click();
    await eventually(async () => expect(await list.locator("#plan-markdown").inputValue()).toBe("# Todos\n- [ ] Book the train (priority: high)\n- [/] Pack"));
    await list.locator("#plan-markdown").fill("# Now\n- [x] Book the train (priority: high)\n# Later\n- [/] Pack");
    await list.locator("#plan-save").click();
    await eventually(async () =>
      expect(await list.locator("#plan-result").textContent()).toMatch(
        /^Saved: 1 phase, 2 tasks\. This agent keeps its plan as one list, so the headings \("Now", "Later"\) were not kept/,
      ),
    );
    const todos = (await (await fetch(`${rig.gateway.url}/v1/sessions/agent:lister:http:list/todos`)).json()) as { todos: unknown[] };
    // The ids stayed with their items through the edit.
    expect(todos.todos).toEqual([
      { id: "1", content: "Book the train", status: "completed", priority: "high" },
      { id: "2", content: "Pack", status: "in_progress", priority: "medium" },
    ]);
    expect(await list.locator("#plan-markdown").inputValue()).not.toContain("<!--");
    await shot(list, "10-list-mobile");
    await list.context().close();
  });

  it("Access lists who waits with a pairing code; Approve lets them in, and they are told so on their channel", async () => {
    const carol = { id: 3003, username: "carol" };
    telegram.message("hello, may I?", carol);
    await eventually(async () => expect(telegram.textsIn(carol.id).join("\n")).toMatch(/Pairing code: [A-HJ-NP-Z2-9]{8}/));
    const page = await open("agent:main:http:access");
    const opener = page.locator("#open-pairing");
    await eventually(async () => expect(await opener.isVisible()).toBe(true));
    expect(await page.locator("#pairing-count").textContent()).toBe("1");
    await opener.click();
    const row = page.locator("#pairing-dialog li.pairing").first();
    await eventually(async () => expect(await row.locator(".tool-name").textContent()).toBe("@carol (3003)"));
    await shot(page, "11-access-waiting");
    await row.getByRole("button", { name: "Approve" }).click();
    await eventually(async () => expect(telegram.textsIn(carol.id)).toContain(APPROVED_TEXT));
    await eventually(async () => expect(await page.locator("#pairing-dialog ul[aria-label='Let in'] .tool-name").allTextContents()).toEqual(["@carol (3003)"]));
    expect(await page.locator("#pairing-count").textContent()).toBe("");
    await shot(page, "12-access-approved");
    await page.context().close();
  });

  it("an address with a malformed or unknown session key opens a session anyway, and says what it could not open", async () => {
    for (const hash of ["%E0%A4%A", "%", "agent:nobody:http:x"]) {
      const page = await open(hash);
      const view = await viewOf(page);
      const remark = view.transcript.find((item) => item.kind === "note");
      expect(remark?.text).toContain("The address named a session this page cannot open");
      expect(page.url()).toMatch(/#agent:[a-z]+:http:/);
      await page.context().close();
    }
  });
});
