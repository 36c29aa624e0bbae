/**
 * Values read from workspace files, read again only when those files may
 * have changed (src/workspace/change-cache.ts), as the prompt files and a
 * workspace's skills use it: a missing file is not looked for again until
 * it appears (however recently its folders changed), a file is read again
 * when it changes, and what cannot be trusted (a symlink, a change too recent for
 * the kernel's time stamps to tell apart) is read every time.
 */
import { mkdirSync, readFileSync, renameSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ChangeCache } from "../../src/workspace/change-cache.js";
import { tempDir } from "../support/project.js";

const LATER = () => Date.now() + 60_000;

function setup(now: () => number = LATER) {
  const root = tempDir();
  const reads: string[] = [];
  const cache = new ChangeCache<string | undefined>(100, now);
  /** A file under root, as the prompt files ask for it: the file, and the folders up to root it is read through. */
  const get = (name: string) => {
    const file = path.join(root, name);
    const through: { through: string }[] = [];
    for (let dir = path.dirname(file); dir.startsWith(root); dir = path.dirname(dir)) through.push({ through: dir });
    return cache.get(
      file,
      () => [file, ...through],
      async () => {
        reads.push(name);
        try {
          return readFileSync(file, "utf8");
        } catch {
          return undefined;
        }
      },
    );
  };
  return { root, reads, get };
}

/** Gives a file or folder times of its own, as a later edit would (the kernel's stamps are coarse). */
const touch = (file: string, seconds: number) => utimesSync(file, seconds, seconds);

/** memory/MEMORY.md under root, holding `text`, with times long past. */
function settledMemory(root: string, text: string): void {
  mkdirSync(path.join(root, "memory"));
  writeFileSync(path.join(root, "memory", "MEMORY.md"), text);
  touch(path.join(root, "memory", "MEMORY.md"), 1_000_000);
}

describe("the cache of values read from workspace files", () => {
  it("a missing prompt file is not opened again until it is made; it is then read", async () => {
    const { root, reads, get } = setup();
    expect(await get("SOUL.md")).toBeUndefined();
    expect(await get("SOUL.md")).toBeUndefined();
    expect(reads).toEqual(["SOUL.md"]);
    writeFileSync(path.join(root, "SOUL.md"), "Be kind.");
    expect(await get("SOUL.md")).toBe("Be kind.");
    expect(await get("SOUL.md")).toBe("Be kind.");
    expect(reads).toEqual(["SOUL.md", "SOUL.md"]);
  });

  it("a prompt file in a missing folder is not looked for again until the folder is made and the file written", async () => {
    const { root, reads, get } = setup();
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(reads).toEqual(["memory/MEMORY.md"]);
    // The folder made: looked for once more (the folder it is read through is new), then not again.
    mkdirSync(path.join(root, "memory"));
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(reads).toEqual(["memory/MEMORY.md", "memory/MEMORY.md"]);
    writeFileSync(path.join(root, "memory", "MEMORY.md"), "- met on Monday");
    expect(await get("memory/MEMORY.md")).toBe("- met on Monday");
    expect(reads).toEqual(["memory/MEMORY.md", "memory/MEMORY.md", "memory/MEMORY.md"]);
  });

  it("a missing prompt file is looked for once even in a folder changed a moment ago (a workspace just made, a file just written beside it)", async () => {
    const { root, reads, get } = setup(Date.now);
    mkdirSync(path.join(root, "memory"));
    writeFileSync(path.join(root, "notes.md"), "written by a tool");
    writeFileSync(path.join(root, "memory", "today.md"), "written by a tool");
    expect(await get("SOUL.md")).toBeUndefined();
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(await get("SOUL.md")).toBeUndefined();
    expect(await get("memory/MEMORY.md")).toBeUndefined();
    expect(reads).toEqual(["SOUL.md", "memory/MEMORY.md"]);
    // Made right after: its own stamp is new, so it is read (and read again while it is that recent).
    writeFileSync(path.join(root, "SOUL.md"), "Be kind.");
    expect(await get("SOUL.md")).toBe("Be kind.");
  });

  it("a prompt file reached through a folder swapped for a symlink to elsewhere is read again", async () => {
    const { root, reads, get } = setup();
    settledMemory(root, "mine");
    expect(await get("memory/MEMORY.md")).toBe("mine");
    const elsewhere = tempDir();
    writeFileSync(path.join(elsewhere, "MEMORY.md"), "theirs");
    touch(path.join(elsewhere, "MEMORY.md"), 1_000_000);
    renameSync(path.join(root, "memory"), path.join(root, "old-memory"));
    symlinkSync(elsewhere, path.join(root, "memory"));
    // This test's reader follows links (the workspace's refuses them): what matters is that the swap is noticed.
    expect(await get("memory/MEMORY.md")).toBe("theirs");
    expect(reads).toEqual(["memory/MEMORY.md", "memory/MEMORY.md"]);
  });

  it("a folder moved out of the workspace and linked back, the same file in it, is not trusted: the file is read again", async () => {
    const { root, reads, get } = setup();
    settledMemory(root, "note");
    expect(await get("memory/MEMORY.md")).toBe("note");
    const outside = path.join(tempDir(), "memory");
    renameSync(path.join(root, "memory"), outside);
    symlinkSync(outside, path.join(root, "memory"));
    // The file's own stamp is unchanged (a move keeps its inode and times); the folder it is read through is a link now.
    await get("memory/MEMORY.md");
    await get("memory/MEMORY.md");
    expect(reads).toEqual(["memory/MEMORY.md", "memory/MEMORY.md", "memory/MEMORY.md"]);
  });

  it("an unchanged prompt file is read once; an edit in place (same size) is read at the next ask", async () => {
    const { root, reads, get } = setup();
    const file = path.join(root, "USER.md");
    writeFileSync(file, "tea");
    touch(file, 1_000_000);
    expect(await get("USER.md")).toBe("tea");
    expect(await get("USER.md")).toBe("tea");
    expect(reads).toEqual(["USER.md"]);
    writeFileSync(file, "tee");
    touch(file, 1_000_100);
    expect(await get("USER.md")).toBe("tee");
    expect(reads).toEqual(["USER.md", "USER.md"]);
  });

  it("a prompt file replaced by a rename is read again, even with the old one's size and times", async () => {
    const { root, get } = setup();
    const file = path.join(root, "USER.md");
    writeFileSync(file, "old");
    touch(file, 1_000_000);
    expect(await get("USER.md")).toBe("old");
    const next = path.join(root, "next.tmp");
    writeFileSync(next, "new");
    touch(next, 1_000_000);
    renameSync(next, file);
    touch(root, 1_000_000);
    expect(await get("USER.md")).toBe("new");
  });

  it("a symlinked prompt file is read every time: its target can change without the link changing", async () => {
    const { root, reads, get } = setup();
    const target = path.join(root, "notes.md");
    writeFileSync(target, "one");
    symlinkSync(target, path.join(root, "USER.md"));
    expect(await get("USER.md")).toBe("one");
    writeFileSync(target, "two");
    touch(target, 1_000_000);
    expect(await get("USER.md")).toBe("two");
    expect(reads).toEqual(["USER.md", "USER.md"]);
  });

  it("a file changed in the last two seconds is read every time (a second edit in the same clock tick leaves its times as they were)", async () => {
    const { root, reads, get } = setup(Date.now);
    writeFileSync(path.join(root, "USER.md"), "tea");
    await get("USER.md");
    await get("USER.md");
    expect(reads).toEqual(["USER.md", "USER.md"]);
  });
});
