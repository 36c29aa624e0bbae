/**
 * Where the browser tests find Chromium, and what happens without one: a
 * machine without it skips them (saying why), but CI, which sets
 * PICOCLAW_REQUIRE_BROWSER=1, fails them.
 */
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { browserTests, findChromium, launchChromium, startPageRig } from "../support/browser.js";
import { tempDir } from "../support/project.js";

/** A folder holding an executable `chromium` (never run here). */
function folderWithChromium(): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, "chromium"), "#!/bin/sh\nexit 1\n");
  chmodSync(path.join(dir, "chromium"), 0o755);
  return dir;
}

describe("finding Chromium for the browser tests", () => {
  it("takes CHROMIUM_PATH first, else `chromium` on PATH", () => {
    const dir = folderWithChromium();
    const other = folderWithChromium();
    expect(findChromium({ PATH: [tempDir(), dir].join(path.delimiter) })).toEqual({ path: path.join(dir, "chromium") });
    expect(findChromium({ PATH: dir, CHROMIUM_PATH: path.join(other, "chromium") })).toEqual({ path: path.join(other, "chromium") });
  });

  it("names what is wrong: a CHROMIUM_PATH that is not an executable, or no chromium anywhere (with the Debian package to install)", () => {
    expect(findChromium({ PATH: folderWithChromium(), CHROMIUM_PATH: "/nowhere/chromium" })).toEqual({
      reason: "CHROMIUM_PATH=/nowhere/chromium is not an executable file",
    });
    expect(findChromium({ PATH: tempDir() })).toEqual({ reason: expect.stringMatching(/apt-get install -y chromium/) });
  });

  it("without Chromium the browser tests are skipped, saying why", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    expect(browserTests({ PATH: tempDir() }).run).toBe(false);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/^skipping the browser tests: no Chromium/));
    log.mockRestore();
  });

  it("with PICOCLAW_REQUIRE_BROWSER=1 and no Chromium they run, and fail saying why, before starting anything", async () => {
    const { run, chromium } = browserTests({ PATH: tempDir(), PICOCLAW_REQUIRE_BROWSER: "1" });
    expect(run).toBe(true);
    await expect(launchChromium(chromium)).rejects.toThrow(/^PICOCLAW_REQUIRE_BROWSER=1, and no Chromium: set CHROMIUM_PATH/);
    await expect(startPageRig("never", chromium)).rejects.toThrow(/PICOCLAW_REQUIRE_BROWSER=1/);
  });
});
