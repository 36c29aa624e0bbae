import { z } from "zod";
import { BUILT_IN_ORIGIN, defineFeature } from "../../port/feature.js";
import { defineTool, toolResult } from "../../tools/tool.js";
import { memorySearchSection } from "./config.js";
import type { MemoryIndex } from "./memory-index.js";

const parameters = z.strictObject({
  query: z.string().trim().min(1).max(500).describe("Words to look for in the memory notes (any of them; word forms match: 'walked' finds 'walking')."),
  limit: z.int().min(1).max(20).optional().describe("Passages to return at most (default 5)."),
});

/**
 * `memory_search` (`tools.memory_search`): full-text search over the
 * workspace's memory notes, `memory/**\/*.md` (MEMORY.md and dated notes,
 * which the agent keeps with the file tools, as in PicoClaw). Each hit is a
 * passage with its file, line and a short excerpt, best first. One index
 * per workspace, brought up to date at each call (files that changed are
 * read again), within the section's bounds.
 */
export const memoryFeature = defineFeature({
  name: "memory",
  needs: ["workspace"],
  config: { tools: { memory_search: memorySearchSection } },
  setup(host, config) {
    const section = config.tools.memory_search;
    /** One index per workspace folder, made once (two first searches at once share it). */
    const indexes = new Map<string, Promise<MemoryIndex>>();
    const tool = defineTool({
      name: "memory_search",
      description:
        "Search your memory notes (memory/MEMORY.md and the other .md files under memory/ in your workspace) for passages about something: a person, a decision, a fact from earlier conversations. Returns the best passages with file and line; read the file for more.",
      parameters,
      enabledByDefault: true,
      execute: async (args, ctx) => {
        const workspace = await host.workspace(ctx.agentId);
        let index = indexes.get(workspace.root);
        if (!index) {
          // The search library is loaded with the first search, never at start.
          index = import("./memory-index.js").then(({ MemoryIndex }) => new MemoryIndex(section));
          indexes.set(workspace.root, index);
        }
        const found = await (await index).query(workspace, args.query, args.limit ?? 5, ctx.signal);
        const left = found.skipped > 0 ? ` (${found.skipped} more not searched: over tools.memory_search.max_files or max_bytes)` : "";
        if (found.hits.length === 0) {
          return toolResult.silent(`No passages found for "${args.query}" in memory/ (${found.files} file${found.files === 1 ? "" : "s"} searched${left}).`);
        }
        const lines = found.hits.map((hit, i) => `${i + 1}. ${hit.file}:${hit.line} (score ${hit.score.toFixed(2)})\n   ${hit.excerpt}`);
        return toolResult.silent(
          `Found ${found.hits.length} passage${found.hits.length === 1 ? "" : "s"} for "${args.query}" in memory/ (${found.files} file${found.files === 1 ? "" : "s"} searched${left}):\n${lines.join("\n")}`,
        );
      },
    });
    return { origin: () => BUILT_IN_ORIGIN, tools: [tool] };
  },
});
