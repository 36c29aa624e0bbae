import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { picoclawProcess } from "../support/cli.js";
import { writeProject } from "../support/project.js";
import { within } from "../support/wait.js";

/** The real gateway started on a session folder whose disk is full: a tmpfs of 64 KiB, filled (README, "Sessions on disk"). */

/** A full disk of its own: a 64 KiB tmpfs with no room left, unmounted when the test ends; undefined where this user may not mount one. */
function fullDisk(): string | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), "picoclaw-full-"));
  if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" }).status !== 0) {
    rmdirSync(dir);
    return undefined;
  }
  onTestFinished(() => {
    spawnSync("umount", [dir], { stdio: "ignore" });
    rmdirSync(dir);
  });
  try {
    writeFileSync(path.join(dir, "filler"), Buffer.alloc(128 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  }
  return dir;
}

describe("a session folder on a full disk", () => {
  it("picoclaw gateway stops at start-up with exit 2, naming the folder and the full disk, not a bare ENOSPC", { timeout: 60_000 }, async (context) => {
    const disk = fullDisk();
    if (!disk) return context.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)");
    const sessions = path.join(disk, "sessions");
    const project = writeProject({ config: { session: { dir: sessions } } });
    const gateway = picoclawProcess(["gateway"], project);
    expect(await within("the gateway to stop", gateway.exited)).toBe(2);
    expect(gateway.output()).toContain(
      `picoclaw: sessions_unusable: the session folder ${sessions} cannot be used (ENOSPC: no space left on device, write): the disk it is on is full. Free some space there, or give session.dir a folder on another disk`,
    );
    // Nothing half-written left behind: no lock, no journal.
    expect(readdirSync(sessions)).toEqual([]);
  });
});
