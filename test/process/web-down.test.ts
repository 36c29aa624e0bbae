/**
 * The chat page while its gateway is gone, in Chromium: the real gateway
 * process stops, the page says so in a banner (not a small status word),
 * keeps trying, and the banner goes by itself when a gateway answers on
 * the same address again; the conversation goes on.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayProcess, browserTests, launchChromium, screenshotFolder, startGatewayProcess, viewOf } from "../support/browser.js";
import { tempDir, writeProject } from "../support/project.js";
import { eventually } from "../support/wait.js";

const { run, chromium } = browserTests();

describe.skipIf(!run)("the chat page when the gateway is down (Chromium)", () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    browser = await launchChromium(chromium);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("a stopped gateway is a banner naming what happened; it clears itself when the gateway is back, and the next message is answered", async () => {
    const project = writeProject({ config: {} }, tempDir());
    let gateway: GatewayProcess = await startGatewayProcess(project);
    const port = new URL(gateway.url).port;
    const shots = screenshotFolder("web-down");
    const page: Page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      await page.goto(`${gateway.url}/#agent:main:http:down`);
      await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
      expect(await page.locator("#banner").isVisible()).toBe(false);

      expect(await gateway.stop()).toBe(0);
      await eventually(async () => expect(await page.locator("#banner").isVisible()).toBe(true));
      expect(await page.locator("#banner").textContent()).toMatch(
        /^The gateway is not answering\. It may be stopped, or this network cannot reach http:\/\/127\.0\.0\.1:\d+\. Trying again (in \d+ s|now)…$/,
      );
      await page.screenshot({ path: path.join(shots, "1-gateway-down.png") });

      gateway = await startGatewayProcess(project, { PICOCLAW_GATEWAY_PORT: port });
      await eventually(async () => expect(await page.locator("#banner").isVisible()).toBe(false), { ms: 45_000 });
      await eventually(async () => expect((await viewOf(page)).status).toBe("live"));
      await page.locator("#message").fill("still there?");
      await page.locator("#message").press("Enter");
      await eventually(async () => expect((await viewOf(page)).transcript.at(-1)?.text).toMatch(/^You said: still there\?/));
      await page.screenshot({ path: path.join(shots, "2-gateway-back.png") });
    } finally {
      await page.close();
      await gateway.stop();
    }
  }, 90_000);
});
