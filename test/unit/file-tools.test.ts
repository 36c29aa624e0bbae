/**
 * The file tools through the gateway, as a model calls them: PicoClaw's
 * names, parameters and result texts; the user sees an edit's diff and
 * never a silent result; every escape is an error result naming what was
 * refused, and nothing outside the workspace is read or written.
 */
import { mkdirSync, readFileSync, realpathSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type Harness, harness } from "../support/project.js";

function gateway(tools: Record<string, unknown> = {}) {
  const h = harness({ config: { tools } });
  const root = path.join(h.dir, "workspace");
  const outside = path.join(h.dir, "outside");
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, "secret.txt"), "the outside secret\n");
  return { h, root, outside };
}

const call = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args)}`;

/** Runs the calls as one turn; the tool results the model got, in order, and what the user was shown. */
async function run(h: Harness, ...calls: [string, unknown][]) {
  const session = `s${Math.random().toString(36).slice(2, 8)}`;
  const { json } = await h.chat({ message: calls.map(([tool, args]) => call(tool, args)).join("\n"), session });
  const history = await h.runtime.historyOf(`agent:main:http:${session}`);
  const results = history.filter((m) => m.role === "tool").map((m) => ({ text: m.content as string, error: (m as { is_error?: boolean }).is_error === true }));
  const shown = (json.delivered as { from: string; text: string }[]).filter((d) => d.from !== "agent");
  return { results, shown };
}

describe("read_file (bytes, PicoClaw's default)", () => {
  it("reads a window with PicoClaw's header, says how to go on, and the end", async () => {
    const { h, root } = gateway();
    writeFileSync(path.join(root, "a.txt"), "0123456789");
    const { results } = await run(
      h,
      ["read_file", { path: "a.txt" }],
      ["read_file", { path: "a.txt", offset: 2, length: 3 }],
      ["read_file", { path: "a.txt", offset: 10 }],
    );
    expect(results.map((r) => r.text)).toEqual([
      "[file: a.txt | total: 10 bytes | read: bytes 0-9]\n[END OF FILE - no further content.]\n\n0123456789",
      "[file: a.txt | total: 10 bytes | read: bytes 2-4]\n[TRUNCATED - file has more content. Call read_file again with offset=5 to continue.]\n\n234",
      "[END OF FILE - no content at this offset]",
    ]);
  });

  it("a 10 GB file is read a window at a time, within max_read_file_size", async () => {
    const { h, root } = gateway({ read_file: { max_read_file_size: 1024 } });
    writeFileSync(path.join(root, "huge.log"), "x".repeat(4096));
    truncateSync(path.join(root, "huge.log"), 10 * 1024 ** 3);
    const { results } = await run(h, ["read_file", { path: "huge.log", length: 1_000_000 }]);
    expect(results[0]!.text.split("\n\n")[0]).toBe(
      "[file: huge.log | total: 10737418240 bytes | read: bytes 0-1023]\n[TRUNCATED - file has more content. Call read_file again with offset=1024 to continue.]",
    );
    expect(results[0]!.text.length).toBeLessThan(1300);
  });

  it("refuses a binary file, a bad offset, a folder, and every way out of the workspace, each an error result naming it", async () => {
    const { h, root, outside } = gateway();
    writeFileSync(path.join(root, "image.bin"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
    mkdirSync(path.join(root, "folder"));
    symlinkSync(path.join(outside, "secret.txt"), path.join(root, "leak.txt"));
    const { results } = await run(
      h,
      ["read_file", { path: "image.bin" }],
      ["read_file", { path: "folder" }],
      ["read_file", { path: "../outside/secret.txt" }],
      ["read_file", { path: path.join(outside, "secret.txt") }],
      ["read_file", { path: "leak.txt" }],
      ["read_file", { path: "a.txt", offset: -1 }],
      ["read_file", { path: "missing.txt" }],
    );
    const workspace = realpathSync(root);
    expect(results.every((r) => r.error)).toBe(true);
    expect(results.map((r) => r.text)).toEqual([
      "file appears to be binary; read_file reads text files only",
      "folder is a directory; list_dir lists it",
      expect.stringMatching(new RegExp(`is outside the workspace \\(${escapeRegExp(workspace)}\\) and not in tools.allow_read_paths$`)),
      expect.stringMatching(/is outside the workspace .* and not in tools\.allow_read_paths$/),
      expect.stringMatching(/resolves through a symlink to .*secret\.txt, outside the workspace/),
      "offset must be >= 0",
      "failed to open missing.txt: no such file or directory",
    ]);
    expect(JSON.stringify(results)).not.toContain("the outside secret");
  });
});

describe("read_file (lines)", () => {
  it("numbers lines from start_line, stops at max_lines saying how to go on, and cuts at the byte budget", async () => {
    const { h, root } = gateway({ read_file: { mode: "lines", max_read_file_size: 1024 } });
    writeFileSync(path.join(root, "poem.txt"), "one\ntwo\nthree\nfour\n");
    writeFileSync(path.join(root, "long.txt"), `${"y".repeat(2000)}\nshort\n`);
    const { results } = await run(
      h,
      ["read_file", { path: "poem.txt" }],
      ["read_file", { path: "poem.txt", start_line: 2, max_lines: 2 }],
      ["read_file", { path: "poem.txt", start_line: 9 }],
      ["read_file", { path: "long.txt" }],
      ["read_file", { path: "poem.txt", offset: 3 }],
    );
    expect(results.map((r) => r.text)).toEqual([
      "[file: poem.txt | read: lines 1-4 (1-indexed) | file_bytes: 19 | output_bytes: 27]\n[END OF FILE - no further content.]\n\n1|one\n2|two\n3|three\n4|four\n",
      "[file: poem.txt | read: lines 2-3 (1-indexed) | file_bytes: 10 | output_bytes: 14]\n[PARTIAL - more content remains. Call read_file again with start_line=4 and max_lines=2 to continue.]\n\n2|two\n3|three\n",
      "[END OF FILE - no content at or after start_line=9]",
      `[file: long.txt | read: lines 1-1 (1-indexed) | file_bytes: 1022 | output_bytes: 1024]\n[TRUNCATED - line 1 exceeded the 1024 byte read budget and was cut mid-line.]\n\n1|${"y".repeat(1022)}`,
      expect.stringContaining('invalid arguments for tool "read_file"'),
    ]);
  });
});

describe("write_file, append_file, edit_file, list_dir", () => {
  it("write_file creates (folders too) and refuses to replace without overwrite; its result is silent", async () => {
    const { h, root } = gateway();
    const { results, shown } = await run(
      h,
      ["write_file", { path: "notes/a.md", content: "first\n" }],
      ["write_file", { path: "notes/a.md", content: "second\n" }],
      ["write_file", { path: "notes/a.md", content: "third\n", overwrite: true }],
    );
    expect(results).toEqual([
      { text: "File written: notes/a.md", error: false },
      { text: "file: notes/a.md already exists. Set overwrite=true to replace.", error: true },
      { text: "File written: notes/a.md", error: false },
    ]);
    expect(readFileSync(path.join(root, "notes", "a.md"), "utf8")).toBe("third\n");
    expect(shown).toEqual([]);
  });

  it("write_file and append_file refuse content over their bounds and paths out, writing nothing", async () => {
    const { h, root, outside } = gateway({ write_file: { max_bytes: 1024 }, append_file: { max_bytes: 1024 } });
    symlinkSync(outside, path.join(root, "door"));
    const { results } = await run(
      h,
      ["write_file", { path: "big.txt", content: "z".repeat(2000) }],
      ["append_file", { path: "big.txt", content: "z".repeat(2000) }],
      ["write_file", { path: "door/planted.txt", content: "x" }],
      ["append_file", { path: "../outside/secret.txt", content: "x" }],
    );
    expect(results.every((r) => r.error)).toBe(true);
    expect(results[0]!.text).toBe("content is 2 KiB, more than tools.write_file.max_bytes allows (1 KiB); write it in parts (append_file)");
    expect(results[1]!.text).toContain("tools.append_file.max_bytes");
    expect(results[2]!.text).toMatch(/resolves through a symlink .* outside the workspace/);
    expect(results[3]!.text).toMatch(/is outside the workspace .* and not in tools\.allow_write_paths$/);
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("the outside secret\n");
  });

  it("append_file adds to the end (making the file); its result is silent", async () => {
    const { h, root } = gateway();
    const { results, shown } = await run(h, ["append_file", { path: "log.md", content: "a\n" }], ["append_file", { path: "log.md", content: "b\n" }]);
    expect(results.map((r) => r.text)).toEqual(["Appended to log.md", "Appended to log.md"]);
    expect(readFileSync(path.join(root, "log.md"), "utf8")).toBe("a\nb\n");
    expect(shown).toEqual([]);
  });

  it("edit_file replaces one exact occurrence and shows the user the diff; none, several or an empty old_text is an error the model can act on", async () => {
    const { h, root } = gateway();
    writeFileSync(path.join(root, "plan.md"), "# Plan\n- buy milk\n- buy bread\n");
    const { results, shown } = await run(
      h,
      ["edit_file", { path: "plan.md", old_text: "- buy milk", new_text: "- buy oat milk" }],
      ["edit_file", { path: "plan.md", old_text: "- buy eggs", new_text: "x" }],
      ["edit_file", { path: "plan.md", old_text: "buy", new_text: "get" }],
      ["edit_file", { path: "plan.md", old_text: "", new_text: "x" }],
    );
    expect(results).toEqual([
      { text: "File edited: plan.md", error: false },
      { text: "old_text not found in file. Make sure it matches exactly", error: true },
      { text: "old_text appears 2 times. Please provide more context to make it unique", error: true },
      { text: "old_text must not be empty; give the exact text to replace", error: true },
    ]);
    expect(readFileSync(path.join(root, "plan.md"), "utf8")).toBe("# Plan\n- buy oat milk\n- buy bread\n");
    expect(shown).toEqual([
      {
        from: "edit_file",
        text: "File edited: plan.md\n```diff\n--- a/plan.md\n+++ b/plan.md\n@@ -1,3 +1,3 @@\n # Plan\n-- buy milk\n+- buy oat milk\n - buy bread\n```",
      },
    ]);
  });

  it("list_dir lists one folder by name, PicoClaw's way, and says so when it is empty", async () => {
    const { h, root } = gateway();
    mkdirSync(path.join(root, "memory"));
    mkdirSync(path.join(root, "empty"));
    writeFileSync(path.join(root, "SOUL.md"), "soul");
    const { results } = await run(h, ["list_dir", { path: "." }], ["list_dir", { path: "empty" }], ["list_dir", { path: ".." }]);
    expect(results.map((r) => r.text)).toEqual([
      "FILE: SOUL.md\nDIR:  empty\nDIR:  memory\n",
      "(empty directory)",
      expect.stringMatching(/is outside the workspace/),
    ]);
  });

  it("each tool is switched by its own section, PICOCLAW_TOOLS_<NAME>_ENABLED too, and shown only when on", async () => {
    const h = harness({ config: { tools: { edit_file: { enabled: false } } }, env: { PICOCLAW_TOOLS_LIST_DIR_ENABLED: "false" } });
    const agents = (await (await h.request("/v1/agents")).json()) as { agents: { tools: string[] }[] };
    expect(agents.agents[0]!.tools).toEqual(expect.arrayContaining(["append_file", "read_file", "write_file"]));
    expect(agents.agents[0]!.tools).not.toContain("edit_file");
    expect(agents.agents[0]!.tools).not.toContain("list_dir");
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
