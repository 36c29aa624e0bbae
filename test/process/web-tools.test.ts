/**
 * The chat page's Tools panel in a real browser (Debian's Chromium,
 * headless) against the real gateway process on a scripted fake model:
 * the panel lists the tools with where each switch comes from, todo is
 * switched on there, and the next message's todo call draws the plan.
 * Screenshots at a desktop width and a phone's (390×844) go to a temporary
 * folder, printed, for a person to look at.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageRig, browserTests, startGatewayProcess, startPageRig, viewOf } from "../support/browser.js";
import { openaiConfig, writeProject } from "../support/project.js";
import { call } from "../support/scripted-openai.js";
import { eventually } from "../support/wait.js";

const { run, chromium } = browserTests();

/** What the panel shows of each tool, read from the page. */
const panelRows = (page: Page) =>
  page.locator("#tools-dialog .tool").evaluateAll((items) =>
    items.map((item) => ({
      name: item.querySelector(".tool-name")?.textContent ?? "",
      source: item.querySelector(".tool-source")?.textContent ?? "",
      agents: item.querySelector(".tool-agents")?.textContent ?? "",
      approval: item.querySelector(".approval")?.textContent ?? "",
      checked: item.querySelector(".switch")?.getAttribute("aria-checked") ?? "",
      locked: (item.querySelector(".switch") as { disabled?: boolean } | null)?.disabled === true,
      result: item.querySelector(".tool-result")?.textContent ?? "",
    })),
  );

describe.skipIf(!run)("the chat page's Tools panel in Chromium", () => {
  let rig: PageRig;
  const problems: string[] = [];

  beforeAll(async () => {
    rig = await startPageRig("web-tools", chromium, { config: { tools: { todo: { enabled: false } } } });
  });

  afterAll(async () => {
    await rig?.close();
    expect(problems).toEqual([]);
  });

  async function open(width: number, height: number): Promise<Page> {
    const page = await rig.browser.newPage({ viewport: { width, height } });
    page.on("pageerror", (error) => problems.push(error.message));
    await page.goto(`${rig.gateway.url}/#agent:main:http:tools`);
    await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
    return page;
  }

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(rig.shots, `${name}.png`) });

  it("lists every tool with its source, switches todo on for the next message, whose todo call draws the plan", async () => {
    const page = await open(1280, 860);
    await page.locator("#open-tools").click();
    await eventually(async () => expect((await panelRows(page)).length).toBeGreaterThan(5));
    const before = await panelRows(page);
    expect(before.find((row) => row.name === "todo")).toMatchObject({
      source: "Set in the config file",
      agents: "Offered to no agent",
      approval: "allow",
      checked: "false",
      locked: false,
    });
    expect(before.find((row) => row.name === "exec")).toMatchObject({
      source: "Its default (on)",
      agents: "Offered to main",
      approval: "ask",
      checked: "true",
    });
    await shot(page, "1-panel-desktop");

    await page.locator('#tools-dialog .tool[data-tool="todo"] .switch').click();
    await eventually(async () =>
      expect((await panelRows(page)).find((row) => row.name === "todo")).toMatchObject({
        checked: "true",
        agents: "Offered to main",
        result: expect.stringMatching(/^On from the next turn \(written to .*picoclaw\.config\.json\)\.$/),
      }),
    );
    await shot(page, "2-todo-on-desktop");
    await page.locator("#tools-dialog .tools-close").click();
    await expect(page.locator("#tools-dialog").isVisible()).resolves.toBe(false);
    // The page follows the switch at once: the plan column no longer says the agent has no todo tool.
    await eventually(async () => expect(await page.locator("#plan-empty").textContent()).toBe("No plan yet."));

    // The next message calls todo: the plan panel draws what it wrote.
    await page.locator("#message").fill(
      [
        call("todo", {
          action: "write",
          todos: [
            { id: "1", content: "Outline the talk", status: "in_progress" },
            { id: "2", content: "Write slides" },
          ],
        }),
        "SAY planned",
      ].join("\n"),
    );
    await page.locator("#message").press("Enter");
    await eventually(async () => expect((await viewOf(page)).transcript.at(-1)).toMatchObject({ kind: "agent", text: "planned" }));
    expect((await viewOf(page)).chips).toEqual([{ name: "todo", status: "ok" }]);
    expect((await viewOf(page)).plan).toEqual([
      {
        phase: "Todos",
        tasks: [
          { text: "Outline the talk", status: "in_progress", checked: "mixed" },
          { text: "Write slides", status: "pending", checked: "false" },
        ],
      },
    ]);
    await shot(page, "3-plan-desktop");
    await page.close();
  });

  it("at 390×844 the panel fits the screen, its rows readable and each switch in reach", async () => {
    const page = await open(390, 844);
    await expect(page.locator("#open-tools").isVisible()).resolves.toBe(true);
    await shot(page, "4-bar-phone");
    await page.locator("#open-tools").click();
    await eventually(async () => expect((await panelRows(page)).length).toBeGreaterThan(5));
    const box = await page.locator("#tools-dialog").boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    // No row is wider than the dialog (nothing to scroll sideways for).
    const overflow = await page.locator("#tools-dialog .tools-body").evaluate((body) => body.scrollWidth - body.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const toggle = await page.locator('#tools-dialog .tool[data-tool="todo"] .switch').boundingBox();
    expect(toggle!.x + toggle!.width).toBeLessThanOrEqual(box!.x + box!.width);
    await shot(page, "5-panel-phone");
    await page.close();
  });

  it("a switch that is refused shows why, and the switch stays as it was", async () => {
    const page = await open(1280, 860);
    // The file goes bad behind the gateway's back: the switch is refused and says so.
    const file = /"config_file":"([^"]+)"/.exec(
      JSON.stringify(
        await (
          await fetch(`${rig.gateway.url}/v1/tools/todo/state`, { method: "PUT", headers: { "content-type": "application/json" }, body: '{"enabled":true}' })
        ).json(),
      ),
    )![1]!;
    const { writeFileSync } = await import("node:fs");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, good.replace("{", '{"not_a_key": 1,'));
    await page.locator("#open-tools").click();
    await eventually(async () => expect((await panelRows(page)).length).toBeGreaterThan(5));
    await page.locator('#tools-dialog .tool[data-tool="todo"] .switch').click();
    await eventually(async () =>
      expect((await panelRows(page)).find((row) => row.name === "todo")).toMatchObject({
        checked: "true",
        result: expect.stringMatching(/^Not changed: the config file would not load after this change.*not_a_key/),
      }),
    );
    await shot(page, "6-refused-desktop");
    writeFileSync(file, good);
    await page.close();
  });

  it("a tool an environment variable switches is shown locked, naming the variable", async () => {
    const project = writeProject({ config: openaiConfig(rig.model.url) }, mkdtempSync(path.join(tmpdir(), "picoclaw-web-tools-locked-")));
    const gateway = await startGatewayProcess(project, { PICOCLAW_TOOLS_EXEC_ENABLED: "false" });
    try {
      const page = await rig.browser.newPage({ viewport: { width: 1280, height: 860 } });
      page.on("pageerror", (error) => problems.push(error.message));
      await page.goto(`${gateway.url}/`);
      await page.locator("#open-tools").click();
      await eventually(async () =>
        expect((await panelRows(page)).find((row) => row.name === "exec")).toMatchObject({
          source: "Locked: PICOCLAW_TOOLS_EXEC_ENABLED sets it",
          agents: "Offered to no agent",
          checked: "false",
          locked: true,
        }),
      );
      await page.locator('#tools-dialog .tool[data-tool="exec"]').scrollIntoViewIfNeeded();
      await shot(page, "7-locked-desktop");
      await page.close();
    } finally {
      expect(await gateway.stop()).toBe(0);
      rmSync(project, { recursive: true, force: true });
    }
  });
});
