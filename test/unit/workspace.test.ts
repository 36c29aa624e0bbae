/**
 * The confined file system every file tool goes through, tested by the
 * escapes it must refuse (a `..`, an absolute path, a symlink out, a device,
 * a NUL) as much as by the uses it allows; nothing outside is ever read or
 * written.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Workspace, type WorkspacePolicy } from "../../src/workspace/workspace.js";
import { tempDir } from "../support/project.js";

async function setup(policy: Partial<WorkspacePolicy> = {}) {
  const base = tempDir();
  const root = path.join(base, "workspace");
  const outside = path.join(base, "outside");
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, "secret.txt"), "the outside secret");
  const workspace = await Workspace.open({ root, restrict: true, readOutside: false, readPaths: [], writePaths: [], ...policy });
  return { base, root: workspace.root, outside, workspace };
}

const read = async (workspace: Workspace, input: string) => {
  const opened = await workspace.openFile(input);
  try {
    return (await opened.handle.readFile()).toString("utf8");
  } finally {
    await opened.handle.close();
  }
};

describe("the workspace", () => {
  it("is made when missing; relative paths are inside it, and shown relative", async () => {
    const { root, workspace } = await setup();
    expect(existsSync(root)).toBe(true);
    await workspace.write("notes/today.md", "hello", "create");
    expect(readFileSync(path.join(root, "notes", "today.md"), "utf8")).toBe("hello");
    expect(await read(workspace, "notes/today.md")).toBe("hello");
    expect(await read(workspace, path.join(root, "notes", "today.md"))).toBe("hello");
    expect(workspace.display(path.join(root, "notes", "today.md"))).toBe("notes/today.md");
    expect(await workspace.list("notes")).toEqual([{ name: "today.md", dir: false }]);
  });

  it("refuses a path out by .., an absolute path outside, and a NUL, naming the workspace", async () => {
    const { root, outside, workspace } = await setup();
    const denied = `is outside the workspace (${root}) and not in tools.allow_read_paths`;
    await expect(workspace.openFile("../outside/secret.txt")).rejects.toThrow(denied);
    await expect(workspace.openFile(path.join(outside, "secret.txt"))).rejects.toThrow(denied);
    await expect(workspace.list("..")).rejects.toThrow(denied);
    await expect(workspace.write("../outside/new.txt", "x", "create")).rejects.toThrow(`is outside the workspace (${root}) and not in tools.allow_write_paths`);
    await expect(workspace.openFile("a\0b")).rejects.toThrow("path must not hold a NUL character");
    expect(existsSync(path.join(outside, "new.txt"))).toBe(false);
  });

  it("refuses a symlink that points outside, for a file and for a folder, to read, list, write or append", async () => {
    const { root, outside, workspace } = await setup();
    symlinkSync(path.join(outside, "secret.txt"), path.join(root, "leak.txt"));
    symlinkSync(outside, path.join(root, "door"));
    await expect(workspace.openFile("leak.txt")).rejects.toThrow(/resolves through a symlink to .*outside.*secret\.txt, outside the workspace/);
    await expect(workspace.openFile("door/secret.txt")).rejects.toThrow("resolves through a symlink");
    await expect(workspace.list("door")).rejects.toThrow("resolves through a symlink");
    await expect(workspace.write("door/planted.txt", "x", "create")).rejects.toThrow("resolves through a symlink");
    await expect(workspace.write("door/deeper/planted.txt", "x", "create")).rejects.toThrow("would be made outside the workspace");
    await expect(workspace.append("leak.txt", "more")).rejects.toThrow("resolves through a symlink");
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("the outside secret");
    expect(existsSync(path.join(outside, "planted.txt"))).toBe(false);
    expect(existsSync(path.join(outside, "deeper"))).toBe(false);
  });

  it("replacing a symlink that points outside replaces the link, never the file it points to", async () => {
    const { root, outside, workspace } = await setup();
    symlinkSync(path.join(outside, "secret.txt"), path.join(root, "leak.txt"));
    await expect(workspace.write("leak.txt", "x", "create")).rejects.toThrow("already exists. Set overwrite=true to replace.");
    await workspace.write("leak.txt", "replaced", "replace");
    expect(readFileSync(path.join(root, "leak.txt"), "utf8")).toBe("replaced");
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("the outside secret");
  });

  it("follows a symlink that stays inside", async () => {
    const { root, workspace } = await setup();
    await workspace.write("real/file.txt", "inside", "create");
    symlinkSync(path.join(root, "real"), path.join(root, "alias"));
    expect(await read(workspace, "alias/file.txt")).toBe("inside");
    await workspace.append("alias/file.txt", " and more");
    expect(readFileSync(path.join(root, "real", "file.txt"), "utf8")).toBe("inside and more");
  });

  it("reads only regular files: a directory and a device are refused, saying what they are", async () => {
    const { workspace } = await setup({ readPaths: [/^\/dev(?:\/|$)/] });
    await workspace.write("sub/x.txt", "x", "create");
    await expect(workspace.openFile("sub")).rejects.toThrow("sub is a directory; list_dir lists it");
    await expect(workspace.openFile("/dev/null")).rejects.toThrow("/dev/null is not a regular file (a device, FIFO or socket); it is not read");
    await expect(workspace.openFile("missing.txt")).rejects.toThrow("failed to open missing.txt: no such file or directory");
  });

  it("writes whole files atomically: create refuses an existing file, replace leaves no temporary file behind", async () => {
    const { root, workspace } = await setup();
    await workspace.write("a.txt", "one", "create");
    await expect(workspace.write("a.txt", "two", "create")).rejects.toThrow("file: a.txt already exists. Set overwrite=true to replace.");
    expect(readFileSync(path.join(root, "a.txt"), "utf8")).toBe("one");
    await workspace.write("a.txt", "two", "replace");
    expect(readFileSync(path.join(root, "a.txt"), "utf8")).toBe("two");
    expect((await workspace.list(".")).map((e) => e.name)).toEqual(["a.txt"]);
    await expect(workspace.write("sub", "x", "create")).resolves.toBe(path.join(root, "sub"));
    await workspace.write("dir/inner.txt", "x", "create");
    await expect(workspace.write("dir", "x", "replace")).rejects.toThrow("dir is a directory");
  });

  it("allow_read_paths and allow_write_paths widen it: a regex, or a ^literal folder and what is inside it", async () => {
    const { root, outside } = await setup();
    const literal = outside.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const workspace = await Workspace.open({
      root,
      restrict: true,
      readOutside: false,
      readPaths: [new RegExp(`^${literal}(?:/|$)`)],
      writePaths: [/\/outside\/drop-[a-z]+\.txt$/],
    });
    expect(await read(workspace, path.join(outside, "secret.txt"))).toBe("the outside secret");
    await workspace.write(path.join(outside, "drop-box.txt"), "dropped", "create");
    expect(readFileSync(path.join(outside, "drop-box.txt"), "utf8")).toBe("dropped");
    await expect(workspace.write(path.join(outside, "other.txt"), "x", "create")).rejects.toThrow("tools.allow_write_paths");
  });

  it("allow_read_outside_workspace reads anywhere and still writes only inside; restrict off allows both", async () => {
    const { outside, workspace } = await setup({ readOutside: true });
    expect(await read(workspace, path.join(outside, "secret.txt"))).toBe("the outside secret");
    await expect(workspace.write(path.join(outside, "x.txt"), "x", "create")).rejects.toThrow("outside the workspace");
    const open = await setup({ restrict: false });
    await open.workspace.write(path.join(open.outside, "x.txt"), "x", "create");
    expect(readFileSync(path.join(open.outside, "x.txt"), "utf8")).toBe("x");
  });
});
