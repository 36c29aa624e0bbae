import { realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { AgentDefinition } from "../../agents/agent.js";
import { defineFeature } from "../../port/feature.js";
import { skillsSection } from "./config.js";
import { type Skill, SkillFolders } from "./skill-folders.js";

const SECTION = "tools.skills";

/** What the skills feature offers its embedder and the CLI (`picoclaw skills list`). */
export interface SkillsApi {
  /** The skills an agent has, in the order the prompt lists them. */
  skillsOf(agent: AgentDefinition): Promise<Skill[]>;
}

/** XML's five characters, escaped: a description is the skill author's text. */
const xml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/**
 * Skills (`tools.skills`), as PicoClaw finds them: `skills/<name>/SKILL.md`
 * in the agent's workspace, then `$PICOCLAW_HOME/skills`, then the built-in
 * ones (`$PICOCLAW_BUILTIN_SKILLS`, else the package's own); the first of a
 * name wins. An AGENT.md `skills:` list keeps only those it names. Every
 * turn's system prompt lists them (`# Skills`: name, description, where
 * its SKILL.md is, and which folder it came from) within max_prompt_bytes;
 * the model reads a skill's file when a task calls for it (the operator's
 * skill folders are readable by the file tools for that). A SKILL.md that
 * is not a skill is a warning naming it, once; the rest go on.
 */
export const skillsFeature = defineFeature({
  name: "skills",
  needs: ["workspace", "locations", "logger", "clock"],
  config: {
    sections: { [SECTION]: skillsSection },
    fromPicoclaw: { [SECTION]: skillsFromPicoclaw },
  },
  frontmatter: { skills: z.array(z.string().min(1)).nullable() },
  setup(host, config) {
    const section = config.sections[SECTION];
    if (!section.enabled) return {};
    const folders = new SkillFolders(
      section.max_skills,
      (message) => host.logger.warn(message),
      () => host.clock.now(),
    );
    // Resolved once (a home that is a symlink): the locations the prompt names are the ones the file tools allow.
    const globalRoot = host.locations.home === undefined ? undefined : resolved(path.join(host.locations.home, "skills"));
    const builtinRoot = host.locations.builtinSkills === undefined ? undefined : resolved(host.locations.builtinSkills);
    const skillsOf = async (agent: AgentDefinition): Promise<Skill[]> => {
      const found = [
        ...(agent.workspace === undefined ? [] : await folders.ofWorkspace(await host.workspace(agent.id))),
        ...(globalRoot === undefined ? [] : await folders.ofFolder(globalRoot, "global")),
        ...(builtinRoot === undefined ? [] : await folders.ofFolder(builtinRoot, "builtin")),
      ];
      const wanted = agent.settings.skills as readonly string[] | null | undefined;
      const seen = new Set<string>();
      return found.filter((skill) => {
        if (seen.has(skill.name)) return false;
        seen.add(skill.name);
        return wanted === undefined || (wanted ?? []).includes(skill.name);
      });
    };
    const api: SkillsApi = { skillsOf };
    return {
      prompt: [
        {
          name: "skills",
          maxBytes: section.max_prompt_bytes + 256,
          text: async ({ agent }) => catalog(await skillsOf(agent), section.max_prompt_bytes),
        },
      ],
      readPaths: [globalRoot, builtinRoot].filter((root): root is string => root !== undefined),
      api,
    };
  },
});

/** A folder with symlinks resolved, or as it is when it does not exist (yet). */
function resolved(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return folder;
  }
}

/** The `# Skills` section: each skill as PicoClaw lists it, as many as fit in `maxBytes`, the rest counted. */
export function catalog(skills: readonly Skill[], maxBytes: number): string | undefined {
  if (skills.length === 0) return undefined;
  const head = [
    "# Skills",
    "",
    "Skills are instructions for particular kinds of task. When a task matches a skill's description, read its SKILL.md (read_file, at its location) before you start, and follow it.",
    "",
    "<skills>",
  ].join("\n");
  const lines: string[] = [];
  let bytes = Buffer.byteLength(head) + 20;
  let left = 0;
  for (const skill of skills) {
    const line = `<skill><name>${xml(skill.name)}</name><description>${xml(skill.description)}</description><location>${xml(skill.location)}</location><source>${skill.source}</source></skill>`;
    const size = Buffer.byteLength(line) + 1;
    if (left > 0 || bytes + size > maxBytes) {
      left++;
      continue;
    }
    lines.push(line);
    bytes += size;
  }
  const rest = left > 0 ? `\n[${left} more skill${left === 1 ? "" : "s"} not listed: over tools.skills.max_prompt_bytes]` : "";
  return `${head}\n${lines.join("\n")}\n</skills>${rest}`;
}

type Json = Record<string, unknown>;

/** PicoClaw's `tools.skills`: its `enabled` is read; its registries and search settings (skill installation, which this gateway does not do) are left out with a note. */
function skillsFromPicoclaw(raw: unknown, notes: string[]): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const out: Json = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(raw as Json)) {
    if (["registries", "github", "max_concurrent_searches", "search_cache"].includes(key)) ignored.push(key);
    else if (value !== null) out[key] = value;
  }
  if (ignored.length > 0)
    notes.push(
      `tools.skills: ${ignored.join(", ")} ${ignored.length === 1 ? "is" : "are"} PicoClaw's skill registries (installing skills), not read here; ignored`,
    );
  return out;
}
