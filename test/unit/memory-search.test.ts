/**
 * memory_search through the real turn: the built-in model scripts the
 * calls, the tool results are read from the session's history. It finds a
 * line write_file put there a turn earlier (the index follows the files),
 * ranks and stems (a word's other forms match), names file and line, looks
 * in dated notes below memory/, forgets a file that was removed, refuses a
 * symlink out of the workspace, and says what its bounds left out.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { passagesOf } from "../../src/features/memory/passages.js";
import { type Harness, harness, jsonOf } from "../support/project.js";

const call = (tool: string, args: unknown) => `CALL ${tool} ${JSON.stringify(args)}`;

/** The tool results of one message's turn, in order. */
async function results(h: Harness, ...lines: string[]): Promise<string[]> {
  const session = `m${Math.random().toString(36).slice(2, 8)}`;
  const { status } = await h.chat({ message: lines.join("\n"), session });
  expect(status).toBe(200);
  const history = await jsonOf(await h.request(`/v1/sessions/agent:main:http:${session}/history`));
  return history.messages.filter((m: { role: string }) => m.role === "tool").map((m: { content: string }) => m.content);
}

function gateway(tools: Record<string, unknown> = {}) {
  const h = harness({ config: { tools } });
  const workspace = path.join(h.dir, "workspace");
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  return { h, workspace };
}

describe("memory_search", () => {
  it("finds a line write_file wrote a turn earlier, with its file and line, the best passage first", async () => {
    const { h } = gateway();
    const [written] = await results(
      h,
      call("write_file", { path: "memory/MEMORY.md", content: "# People\n\nAlice prefers green tea.\n\n# Projects\n\nThe garden shed needs a new roof.\n" }),
    );
    expect(written).toMatch(/File written/);
    const [found] = await results(h, call("memory_search", { query: "tea" }));
    expect(found).toMatch(
      /^Found 1 passage for "tea" in memory\/ \(1 file searched\):\n1\. memory\/MEMORY\.md:3 \(score \d+\.\d\d\)\n {3}Alice prefers green tea\.$/,
    );
    // An edit is seen at the next search.
    await results(h, call("append_file", { path: "memory/MEMORY.md", content: "\nBob drinks tea with milk, lots of tea.\n" }));
    const [again] = await results(h, call("memory_search", { query: "tea" }));
    expect(again).toMatch(/^Found 2 passages/);
    expect(again!.split("\n")[1]).toMatch(/^1\. memory\/MEMORY\.md:9 /);
  });

  it("matches other forms of a word, and looks in dated notes below memory/", async () => {
    const { h, workspace } = gateway();
    mkdirSync(path.join(workspace, "memory", "202612"), { recursive: true });
    writeFileSync(path.join(workspace, "memory", "202612", "20261201.md"), "We walked along the river.\n\nThen lunch.\n");
    const [found] = await results(h, call("memory_search", { query: "walking", limit: 3 }));
    expect(found).toMatch(/^Found 1 passage for "walking" in memory\/ \(1 file searched\):\n1\. memory\/202612\/20261201\.md:1 /);
    expect(found).toContain("We walked along the river.");
  });

  it("forgets a removed file; says when nothing matches", async () => {
    const { h, workspace } = gateway();
    writeFileSync(path.join(workspace, "memory", "old.md"), "The password hint is a red bicycle.\n");
    expect((await results(h, call("memory_search", { query: "bicycle" })))[0]).toMatch(/^Found 1 passage/);
    rmSync(path.join(workspace, "memory", "old.md"));
    expect((await results(h, call("memory_search", { query: "bicycle" })))[0]).toBe('No passages found for "bicycle" in memory/ (0 files searched).');
  });

  it("does not follow a symlink out of the workspace, and says what its bounds left out", async () => {
    const { h, workspace } = gateway({ memory_search: { max_files: 1 } });
    const outside = path.join(h.dir, "outside.md");
    writeFileSync(outside, "secret plans for the moon\n");
    symlinkSync(outside, path.join(workspace, "memory", "a-link.md"));
    writeFileSync(path.join(workspace, "memory", "b.md"), "moon landing notes\n");
    writeFileSync(path.join(workspace, "memory", "c.md"), "more moon notes\n");
    const [found] = await results(h, call("memory_search", { query: "moon" }));
    expect(found).not.toContain("secret");
    expect(found).toMatch(/\(1 file searched \(1 more not searched: over tools\.memory_search\.max_files or max_bytes\)\)/);
  });

  it("a bad query is an error result the model can act on", async () => {
    const { h } = gateway();
    const [bad] = await results(h, call("memory_search", { query: "", limit: 50 }));
    expect(bad).toMatch(/^invalid arguments for tool "memory_search": /);
  });
});

describe("passages of a note", () => {
  it("are its paragraphs, a heading starting one of its own, each with its first line", () => {
    expect(passagesOf("# Title\nintro line\n\npara one\nstill one\n\n\n## Sub\nbody")).toEqual([
      { line: 1, text: "# Title\nintro line" },
      { line: 4, text: "para one\nstill one" },
      { line: 8, text: "## Sub\nbody" },
    ]);
  });
});
