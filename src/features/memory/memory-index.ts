import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import type { Workspace } from "../../workspace/workspace.js";
import { WorkspaceError } from "../../workspace/workspace.js";
import type { MemorySearchSection } from "./config.js";
import { excerptOf, passagesOf } from "./passages.js";

/**
 * One workspace's `memory/**\/*.md`, indexed for full-text search
 * (MiniSearch; English stems, so "walked" finds "walking"). Before each
 * search the folder is looked at again (names, sizes and times) and only
 * files that changed are read and indexed again, so a line written a turn
 * earlier is found. Files are read through the workspace (a symlink out of
 * it is not followed). Bounded: at most `max_files` files and `max_bytes`
 * bytes indexed; what is past them is counted and said, not searched.
 */

export interface MemoryHit {
  /** The file, relative to the workspace (`memory/2026/notes.md`). */
  file: string;
  line: number;
  excerpt: string;
  score: number;
}

export interface MemorySearch {
  hits: MemoryHit[];
  /** Files searched, and those left out by the bounds. */
  files: number;
  skipped: number;
}

interface Doc {
  id: string;
  file: string;
  line: number;
  text: string;
}

interface Indexed {
  mtimeMs: number;
  size: number;
  ids: string[];
}

/** How deep memory/ is walked (memory/YYYYMM/YYYYMMDD.md is two). */
const MAX_DEPTH = 6;

const stem = (term: string) => stemmer(term.toLowerCase());

export class MemoryIndex {
  private readonly search = new MiniSearch<Doc>({
    fields: ["text"],
    storeFields: ["file", "line", "text"],
    processTerm: (term) => (term.length > 0 ? stem(term) : null),
    searchOptions: { prefix: true, fuzzy: 0.15, combineWith: "OR" },
  });
  private readonly files = new Map<string, Indexed>();
  /** The last search's refresh: searches of one index go one at a time (two calls at once must not index one file twice). */
  private last: Promise<unknown> = Promise.resolve();

  constructor(private readonly bounds: Pick<MemorySearchSection, "max_files" | "max_bytes">) {}

  query(workspace: Workspace, query: string, limit: number, signal: AbortSignal): Promise<MemorySearch> {
    const run = this.last.then(() => this.search1(workspace, query, limit, signal));
    this.last = run.catch(() => {});
    return run;
  }

  private async search1(workspace: Workspace, query: string, limit: number, signal: AbortSignal): Promise<MemorySearch> {
    const { files, skipped } = await this.refresh(workspace, signal);
    const hits = this.search.search(query).slice(0, limit);
    return {
      hits: hits.map((hit) => ({ file: hit.file as string, line: hit.line as number, excerpt: excerptOf(hit.text as string), score: hit.score })),
      files,
      skipped,
    };
  }

  /** Brings the index up to date with the folder: new and changed files read again, gone ones dropped. */
  private async refresh(workspace: Workspace, signal: AbortSignal): Promise<{ files: number; skipped: number }> {
    const found = (await listMarkdown(workspace, "memory", 0, signal)).sort();
    const seen = new Set<string>();
    let bytes = 0;
    let skipped = 0;
    for (const file of found) {
      signal.throwIfAborted();
      if (seen.size >= this.bounds.max_files) {
        skipped++;
        continue;
      }
      let opened: Awaited<ReturnType<Workspace["openFile"]>>;
      try {
        opened = await workspace.openFile(file);
      } catch (error) {
        if (error instanceof WorkspaceError) continue;
        throw error;
      }
      try {
        if (bytes + opened.size > this.bounds.max_bytes) {
          skipped++;
          continue;
        }
        bytes += opened.size;
        seen.add(file);
        const stat = await opened.handle.stat();
        const known = this.files.get(file);
        if (known && known.mtimeMs === stat.mtimeMs && known.size === opened.size) continue;
        if (known) this.drop(file, known);
        const text = (await opened.handle.readFile()).toString("utf8");
        const docs = passagesOf(text).map((passage, i) => ({ id: `${file}#${i}`, file, line: passage.line, text: passage.text }));
        this.search.addAll(docs);
        this.files.set(file, { mtimeMs: stat.mtimeMs, size: opened.size, ids: docs.map((doc) => doc.id) });
      } finally {
        await opened.handle.close();
      }
    }
    for (const [file, known] of [...this.files]) if (!seen.has(file)) this.drop(file, known);
    return { files: seen.size, skipped };
  }

  private drop(file: string, known: Indexed): void {
    for (const id of known.ids) this.search.discard(id);
    this.files.delete(file);
  }
}

/** The `.md` files under a folder of the workspace, relative to it; none when the folder is missing. */
async function listMarkdown(workspace: Workspace, folder: string, depth: number, signal: AbortSignal): Promise<string[]> {
  signal.throwIfAborted();
  let entries: Awaited<ReturnType<Workspace["list"]>>;
  try {
    entries = await workspace.list(folder);
  } catch (error) {
    if (error instanceof WorkspaceError) return [];
    throw error;
  }
  const out: string[] = [];
  for (const entry of entries) {
    const inner = `${folder}/${entry.name}`;
    if (entry.dir) {
      if (depth < MAX_DEPTH) out.push(...(await listMarkdown(workspace, inner, depth + 1, signal)));
    } else if (entry.name.toLowerCase().endsWith(".md")) out.push(inner);
  }
  return out;
}
