import path from "node:path";
import { cutToBytes } from "../../bytes.js";
import { defineFeature } from "../../port/feature.js";
import type { PromptSection } from "../../port/prompt.js";
import type { Workspace } from "../../workspace/workspace.js";
import { promptFilesSection } from "./config.js";
import { ChangeCache, type Watched } from "../../workspace/change-cache.js";

const SECTION = "agents.defaults.prompt_files";

/**
 * The workspace's prompt files, as PicoClaw reads them, in the system
 * prompt after the AGENT.md body, in this order: `## SOUL.md`, `## USER.md`,
 * `## IDENTITY.md` (each headed by its name), then `# Memory` with
 * memory/MEMORY.md. A missing file adds nothing; each is cut to
 * `max_bytes`. Read through the agent's workspace (a symlink out is not
 * followed) when they may have changed (the file's lstat changed, or a
 * folder on its way is no longer the same real folder: change-cache.ts),
 * so an edit shows in the next turn; the text changes only when a file
 * does, so prompt caching keeps hitting.
 */
export const promptFilesFeature = defineFeature({
  name: "prompt-files",
  needs: ["workspace"],
  config: { sections: { [SECTION]: promptFilesSection } },
  setup(host, config) {
    const { enabled, max_bytes } = config.sections[SECTION];
    if (!enabled) return {};
    // Per workspace and file; a handful of files per agent.
    const files = new ChangeCache<string | undefined>(1024);
    const cached = (workspace: Workspace, name: string) => {
      const absolute = workspace.locate(name);
      // The file's own lstat, and that each folder it is read through is still the same real folder: a file made
      // where it was missing, edited, renamed over, or reached through a folder swapped for a link differs. The
      // folders' times are not asked: they change whenever anything beside the file does (the workspace made at
      // start, a tool writing a file), and a folder changed in the last SETTLED_MS would have every turn look for
      // the missing files again.
      return files.get(
        absolute,
        () => watched(absolute, workspace.root),
        () => readText(workspace, name, max_bytes),
      );
    };
    const file = (name: string, heading: (text: string) => string): PromptSection => ({
      name,
      // Room for the heading and the note of a file cut, beside the file's own bytes.
      maxBytes: max_bytes + 256,
      text: async ({ agent }) => {
        if (agent.workspace === undefined) return undefined;
        const text = await cached(await host.workspace(agent.id), name);
        return text === undefined || text.trim() === "" ? undefined : heading(text.trim());
      },
    });
    return {
      prompt: [
        file("SOUL.md", (text) => `## SOUL.md\n\n${text}`),
        file("USER.md", (text) => `## USER.md\n\n${text}`),
        file("IDENTITY.md", (text) => `## IDENTITY.md\n\n${text}`),
        file("memory/MEMORY.md", (text) => `# Memory\n\n${text}`),
      ],
    };
  },
});

/** The file, and each folder from it up to the workspace's root as a folder it is read through. */
function watched(absolute: string, root: string): Watched[] {
  const paths: Watched[] = [absolute];
  for (let dir = path.dirname(absolute); dir.startsWith(root); dir = path.dirname(dir)) {
    paths.push({ through: dir });
    if (dir === root || path.dirname(dir) === dir) break;
  }
  return paths;
}

/** A text file of the workspace, cut at a line to `maxBytes` (saying so), or undefined when missing. */
async function readText(workspace: Workspace, name: string, maxBytes: number): Promise<string | undefined> {
  const read = await workspace.readStart(name, maxBytes);
  if (read === undefined) return undefined;
  const text = cutToBytes(read.text, maxBytes);
  if (read.size <= maxBytes) return text;
  const line = text.lastIndexOf("\n");
  return `${line > 0 ? text.slice(0, line) : text}\n[${name} was cut here: it is ${read.size} bytes, over agents.defaults.prompt_files.max_bytes (${maxBytes}).]`;
}
