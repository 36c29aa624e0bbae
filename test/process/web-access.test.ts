/**
 * The chat page's edges in a real browser: a gateway with a token, a phone
 * in dark mode, a gateway without the session list; and the package that
 * ships the page.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageRig, browserTests, startPageRig, viewOf } from "../support/browser.js";
import { call } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const TOKEN = "web-page-token-4821";
const { run, chromium } = browserTests();

describe("the package", () => {
  it("ships the built page, so an installed gateway serves it too", { timeout: 60_000 }, async () => {
    const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root });
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    expect(files).toEqual(expect.arrayContaining(["dist/main.js", "dist/web/index.html", "dist/web/app.js", "dist/web/app.css", "dist/web/favicon.svg"]));
    // The page's sources are not needed at run time.
    expect(files.filter((file) => file.startsWith("web/"))).toEqual([]);
  });
});

describe.skipIf(!run)("the chat page's edges in Chromium", () => {
  let rig: PageRig;
  const problems: string[] = [];

  beforeAll(async () => {
    rig = await startPageRig("web-access", chromium, { config: { gateway: { token: TOKEN }, tools: { todo: { enabled: true } } } });
  });

  afterAll(async () => {
    await rig?.close();
  });

  async function context(options: Parameters<PageRig["browser"]["newContext"]>[0] = {}): Promise<BrowserContext> {
    const made = await rig.browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
    made.on("weberror", (error) => problems.push(error.error().message));
    return made;
  }

  /** Opens the page and gives it the token the way a person does. */
  async function signedIn(made: BrowserContext, session: string): Promise<Page> {
    const page = await made.newPage();
    await page.goto(`${rig.gateway.url}/#${session}`);
    await page.locator("#token").fill(TOKEN);
    await page.locator("#token").press("Enter");
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });

  it("with a token set, the page asks for it, says when it is wrong, keeps it for the tab only, and sends it as a bearer token", async () => {
    // The page itself needs no token; the API does.
    expect((await fetch(`${rig.gateway.url}/`)).status).toBe(200);
    expect((await fetch(`${rig.gateway.url}/v1/agents`)).status).toBe(401);

    const made = await context();
    const page = await made.newPage();
    const authorizations: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).pathname.startsWith("/v1/")) authorizations.push(request.headers().authorization ?? "");
    });
    await page.goto(`${rig.gateway.url}/#agent:main:http:tokened`);
    await eventually(async () => expect(await page.locator("#token-dialog").isVisible()).toBe(true));
    expect(await page.locator("#token-error").isVisible()).toBe(false);
    await shot(page, "1-token-prompt");

    await page.locator("#token").fill("not-the-token");
    await page.locator("#token").press("Enter");
    await eventually(async () => expect(await page.locator("#token-error").isVisible()).toBe(true));
    expect(await page.locator("#token-dialog").isVisible()).toBe(true);
    await shot(page, "2-token-refused");

    await page.locator("#token").fill(TOKEN);
    await page.locator("#token").press("Enter");
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    expect(await page.locator("#token-dialog").isVisible()).toBe(false);
    await page.locator("#message").fill("SAY hello with a token");
    await page.locator("#message").press("Enter");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("hello with a token"));
    expect(authorizations.at(-1)).toBe(`Bearer ${TOKEN}`);

    // Kept for this tab (a reload asks nothing), never in the URL or local storage.
    await page.reload();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toBe("hello with a token"));
    expect(await page.locator("#token-dialog").isVisible()).toBe(false);
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate(() => (globalThis as unknown as { localStorage: { length: number } }).localStorage.length)).toBe(0);
    await made.close();

    // Another browser session is asked again.
    const other = await context();
    const fresh = await other.newPage();
    await fresh.goto(`${rig.gateway.url}/`);
    await eventually(async () => expect(await fresh.locator("#token-dialog").isVisible()).toBe(true));
    await other.close();
  });

  it("on a phone in dark mode: one column, nothing scrolls sideways, the plan and sessions open as drawers", async () => {
    const made = await context({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: "dark" });
    const page = await signedIn(made, "agent:main:http:phone");
    await page.locator("#message").fill(
      [
        call("todo", {
          action: "write",
          todos: [
            { id: "1", content: "Pack a charger", status: "completed" },
            { id: "2", content: "Check the train times", status: "in_progress" },
            { id: "3", content: "Book a table for four" },
          ],
        }),
        "SAY The plan is on the Plan tab: one done, one under way, one to go.",
      ].join("\n"),
    );
    await page.locator("#send").tap();
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toMatch(/^The plan is on the Plan tab/));

    const layout = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as {
          innerWidth: number;
          document: { documentElement: { scrollWidth: number }; body: unknown };
          getComputedStyle(element: unknown): { backgroundColor: string };
        };
        return { scrollWidth: g.document.documentElement.scrollWidth, width: g.innerWidth, background: g.getComputedStyle(g.document.body).backgroundColor };
      });
    const chat = await layout();
    expect(chat.scrollWidth).toBeLessThanOrEqual(chat.width);
    // Dark: the page's background is dark.
    const [r, g, b] = chat.background.match(/\d+/g)!.map(Number);
    expect(r! + g! + b!).toBeLessThan(120);
    expect(await page.locator("#side").isVisible()).toBe(false);
    expect(await page.locator("#sessions").isVisible()).toBe(false);
    expect(await page.locator("#plan-count").textContent()).toBe("1/3");
    // The bar: the agent's name readable on the first line, the session and its status on the second.
    const agent = (await page.locator("#agent").boundingBox())!;
    const title = (await page.locator("#session-title").boundingBox())!;
    expect(agent.width).toBeGreaterThan(120);
    expect(title.y).toBeGreaterThanOrEqual(agent.y + agent.height);
    expect(await page.locator("#session-title").textContent()).toBe("phone");
    await shot(page, "3-phone-dark-chat");

    await page.locator("#toggle-side").tap();
    expect(await page.locator("#side").isVisible()).toBe(true);
    expect(await page.locator("#toggle-side").getAttribute("aria-expanded")).toBe("true");
    expect((await viewOf(page)).plan[0]!.tasks.map((task) => task.status)).toEqual(["completed", "in_progress", "pending"]);
    expect((await layout()).scrollWidth).toBeLessThanOrEqual(chat.width);
    await shot(page, "4-phone-dark-plan");

    await page.locator("#toggle-sessions").tap();
    expect(await page.locator("#sessions").isVisible()).toBe(true);
    expect(await page.locator("#side").isVisible()).toBe(false);
    await shot(page, "5-phone-dark-sessions");
    await made.close();
  });

  it("in light and dark on a wide screen, the same conversation reads the same", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const made = await context({ colorScheme });
      const page = await signedIn(made, "agent:main:http:phone");
      await eventually(async () => expect((await viewOf(page)).plan[0]?.tasks).toHaveLength(3));
      await shot(page, `6-wide-${colorScheme}`);
      await made.close();
    }
  });

  it("a gateway without the session list (an older one: 404) leaves the new-session box, and a session starts by its name", async () => {
    const made = await context();
    await made.route(/\/v1\/sessions(\?.*)?$/, (route) =>
      route.fulfill({ status: 404, contentType: "application/json", body: JSON.stringify({ error: { code: "not_found", message: "no route" } }) }),
    );
    const page = await signedIn(made, "agent:main:http:first");
    expect(await page.locator("#session-list").isVisible()).toBe(false);
    expect(await page.locator("#sessions-note").textContent()).toMatch(/keeps no session list/);
    await page.locator("#new-session-name").fill("trip notes");
    await page.locator("#new-session-name").press("Enter");
    expect(await page.locator("#new-session-error").isVisible()).toBe(true);
    await page.locator("#new-session-name").fill("trip-notes");
    await page.locator("#new-session-name").press("Enter");
    await eventually(async () => expect(page.url()).toMatch(/#agent:main:http:trip-notes$/));
    expect(await page.locator("#session-title").textContent()).toBe("trip-notes");
    await page.locator("#message").fill("SAY a fresh start");
    await page.locator("#message").press("Enter");
    await eventually(async () => expect((await viewOf(page)).transcript.map((item) => item.text)).toEqual(["SAY a fresh start", "a fresh start"]));
    await shot(page, "7-no-session-list");
    await made.close();
  });

  it("no page had an uncaught error", () => {
    expect(problems).toEqual([]);
  });
});
