import { open, readdir } from "node:fs/promises";
import path from "node:path";
import type { Workspace } from "../../workspace/workspace.js";
import { WorkspaceError } from "../../workspace/workspace.js";
import { ChangeCache } from "../../workspace/change-cache.js";
import { type SkillHead, readSkillHead } from "./skill-file.js";

/**
 * Reading skill folders: `<root>/<name>/SKILL.md`, each folder's skills in
 * name order, at most `max` of them. A workspace's `skills/` is read through
 * the workspace (a symlink out is not followed: the model writes there); the
 * operator's folders ($PICOCLAW_HOME/skills, the built-in ones) directly.
 * Only the head of a SKILL.md is read (its frontmatter and first
 * paragraph); what was read is kept by path, size and time, so a turn reads
 * again only what changed, and a workspace's folder is listed again only
 * when it may have changed.
 */

export type SkillSource = "workspace" | "global" | "builtin";

export interface Skill extends SkillHead {
  /** The SKILL.md, absolute: where the model reads it. */
  location: string;
  source: SkillSource;
}

/** Bytes of a SKILL.md read for its head. */
const HEAD_BYTES = 16 * 1024;
/** Heads kept at most; past it the cache starts again (it only saves reads). */
const MAX_CACHED = 2000;

/** What a workspace's skills were read from (the skill folders listed) and what was found. */
interface WorkspaceSkills {
  names: string[];
  skills: Skill[];
}

interface Cached {
  mtimeMs: number;
  size: number;
  head: SkillHead | { problem: string };
}

/** How long an operator's folder's listing is used before it is read again (a workspace's is read again when it changed). */
export const FOLDER_TTL_MS = 2000;

export class SkillFolders {
  private readonly cache = new Map<string, Cached>();
  /** The operator's folders as last read, and when. */
  private readonly folders = new Map<string, { at: number; skills: Skill[] }>();
  /** Each workspace's skills as last read, kept while nothing they came from changed. */
  private readonly workspaces: ChangeCache<WorkspaceSkills>;
  /** Problems already warned about (by path and time): each is said once. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.workspaces = new ChangeCache(MAX_CACHED, now);
  }

  /** The skills of an operator's folder (none when it does not exist), read again at most every FOLDER_TTL_MS: it changes rarely, and every turn asks. */
  async ofFolder(root: string, source: SkillSource): Promise<Skill[]> {
    const known = this.folders.get(root);
    if (known && this.now() - known.at < FOLDER_TTL_MS) return known.skills;
    const skills = await this.readFolder(root, source);
    this.folders.set(root, { at: this.now(), skills });
    return skills;
  }

  private async readFolder(root: string, source: SkillSource): Promise<Skill[]> {
    let names: string[];
    try {
      names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
    const skills: Skill[] = [];
    for (const name of this.bounded(names.sort(), root)) {
      const file = path.join(root, name, "SKILL.md");
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(file, "r");
      } catch {
        continue;
      }
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) continue;
        const head = await this.head(file, stat.mtimeMs, stat.size, name, () => readHead(handle, stat.size));
        if (head) skills.push({ ...head, location: file, source });
      } finally {
        await handle.close();
      }
    }
    return skills;
  }

  /**
   * The skills of a workspace's `skills/` folder, read through the
   * workspace: again whenever the folder, a skill's folder or its SKILL.md
   * may have changed (the model writes skills there, and the next turn must
   * see them), else as last read (change-cache.ts).
   */
  async ofWorkspace(workspace: Workspace): Promise<Skill[]> {
    const root = path.join(workspace.root, "skills");
    // The folder whose listing was read, each skill's folder and file; not the workspace's own folder, whose
    // times change with anything written beside skills/ (a missing skills/ is seen made by its own lstat).
    const paths = (read: WorkspaceSkills) => [root, ...read.names.flatMap((name) => [path.join(root, name), path.join(root, name, "SKILL.md")])];
    return (await this.workspaces.get(workspace.root, paths, () => this.readWorkspace(workspace))).skills;
  }

  private async readWorkspace(workspace: Workspace): Promise<WorkspaceSkills> {
    let names: string[];
    try {
      names = (await workspace.list("skills")).filter((e) => e.dir).map((e) => e.name);
    } catch (error) {
      if (error instanceof WorkspaceError) return { names: [], skills: [] };
      throw error;
    }
    names = this.bounded(names, path.join(workspace.root, "skills"));
    const skills: Skill[] = [];
    for (const name of names) {
      let opened: Awaited<ReturnType<Workspace["openFile"]>>;
      try {
        opened = await workspace.openFile(`skills/${name}/SKILL.md`);
      } catch (error) {
        if (error instanceof WorkspaceError) continue;
        throw error;
      }
      try {
        const stat = await opened.handle.stat();
        const head = await this.head(opened.realPath, stat.mtimeMs, opened.size, name, () => readHead(opened.handle, opened.size));
        if (head) skills.push({ ...head, location: opened.realPath, source: "workspace" });
      } finally {
        await opened.handle.close();
      }
    }
    return { names, skills };
  }

  private bounded(names: string[], root: string): string[] {
    if (names.length <= this.max) return names;
    this.warnOnce(`${root}:${names.length}`, `${root} holds ${names.length} skill folders; the first ${this.max} (by name) are read (tools.skills.max_skills)`);
    return names.slice(0, this.max);
  }

  private async head(file: string, mtimeMs: number, size: number, folder: string, read: () => Promise<string>): Promise<SkillHead | undefined> {
    let cached = this.cache.get(file);
    if (!cached || cached.mtimeMs !== mtimeMs || cached.size !== size) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      cached = { mtimeMs, size, head: readSkillHead(await read(), folder) };
      this.cache.set(file, cached);
    }
    if ("problem" in cached.head) {
      this.warnOnce(`${file}:${mtimeMs}`, `${file}: not a skill: ${cached.head.problem}; skipped`);
      return undefined;
    }
    return cached.head;
  }

  private warnOnce(key: string, message: string): void {
    if (this.warned.has(key)) return;
    if (this.warned.size >= MAX_CACHED) this.warned.clear();
    this.warned.add(key);
    this.warn(message);
  }
}

/** The first HEAD_BYTES of a file, as text. */
async function readHead(
  handle: { read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }> },
  size: number,
): Promise<string> {
  const buffer = Buffer.alloc(Math.min(size, HEAD_BYTES));
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).toString("utf8");
}
