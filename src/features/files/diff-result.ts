import { type ToolResult, toolResult } from "../../tools/tool.js";

/**
 * What a successful edit says, as PicoClaw's DiffResult: the model gets
 * `File edited: <path>`; the user also sees a unified diff (3 lines of
 * context, `a/` and `b/` headers), cut at 16 KiB. A side over 64 KiB or
 * 2,000 lines gets no diff (and the result is silent). The diff library is
 * loaded with the first edit.
 */

const MAX_DIFF_INPUT_BYTES = 64 * 1024;
const MAX_DIFF_INPUT_LINES = 2000;
const MAX_USER_DIFF_BYTES = 16 * 1024;
const NO_CHANGE = "(no content change)";
const TRUNCATED = "[diff preview truncated; call read_file for the full edited contents]";

export async function editResult(path: string, before: string, after: string): Promise<ToolResult> {
  const summary = `File edited: ${path}`;
  const tooLarge = (text: string) => Buffer.byteLength(text, "utf8") > MAX_DIFF_INPUT_BYTES || text.split("\n").length > MAX_DIFF_INPUT_LINES;
  if (tooLarge(before) || tooLarge(after)) return toolResult.silent(`${summary}\n[diff preview skipped: file too large for inline preview]`);
  const diff = await unifiedDiff(path, before, after);
  const cut = Buffer.byteLength(diff, "utf8") > MAX_USER_DIFF_BYTES;
  const shown = cut
    ? Buffer.from(diff, "utf8")
        .subarray(0, MAX_USER_DIFF_BYTES)
        .toString("utf8")
        .replace(/\uFFFD$/, "")
    : diff;
  const forUser = `${summary}\n\`\`\`diff\n${shown}\n\`\`\`${cut ? `\n${TRUNCATED}` : ""}`;
  const forLLM = diff === NO_CHANGE ? `${summary}\n${NO_CHANGE}` : cut ? `${summary}\n${TRUNCATED}` : summary;
  return toolResult.text(forLLM, forUser);
}

async function unifiedDiff(path: string, before: string, after: string): Promise<string> {
  const { structuredPatch } = await import("diff");
  const patch = structuredPatch(`a/${path}`, `b/${path}`, before, after, "", "", { context: 3 });
  if (patch.hunks.length === 0) return NO_CHANGE;
  const lines = [`--- a/${path}`, `+++ b/${path}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines);
  }
  return lines.join("\n");
}

/** A hunk's range as unified diffs write it: `start,count`, `start` alone for one line, `start-1,0` for none. */
function range(start: number, count: number): string {
  if (count === 1) return `${start}`;
  return count === 0 ? `${start === 0 ? 0 : start},0` : `${start},${count}`;
}
