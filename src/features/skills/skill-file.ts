import { parseDocument } from "yaml";

/**
 * A SKILL.md as PicoClaw reads it: frontmatter between `---` lines (JSON or
 * YAML) with `name` and `description`; without them, the folder's name
 * (or the first `# ` heading, when it is a valid name) and the body's first
 * paragraph. A name is letters and digits in groups joined by `-`, at most
 * 64 characters; a description is required, at most 1024 characters.
 */

export const SKILL_NAME = /^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$/;
export const MAX_DESCRIPTION = 1024;

export interface SkillHead {
  name: string;
  description: string;
}

/** The skill's name and description, or why it is not a skill (for a warning naming the file). */
export function readSkillHead(text: string, folderName: string): SkillHead | { problem: string } {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  let front: Record<string, unknown> = {};
  let body = normalized;
  const open = /^---[ \t]*\n/.exec(normalized);
  if (open) {
    const close = /^---[ \t]*$/m.exec(normalized.slice(open[0].length));
    if (!close) return { problem: "its frontmatter is not closed by a --- line" };
    const raw = normalized.slice(open[0].length, open[0].length + close.index);
    body = normalized.slice(open[0].length + close.index + close[0].length);
    const parsed = parseFront(raw);
    if (typeof parsed === "string") return { problem: parsed };
    front = parsed;
  }
  for (const key of ["name", "description"] as const) {
    if (front[key] !== undefined && typeof front[key] !== "string") return { problem: `its frontmatter's ${key} is not a string` };
  }
  const heading = /^#[ \t]+(.+?)[ \t]*$/m.exec(body)?.[1];
  const name = (front.name as string | undefined)?.trim() || (heading && SKILL_NAME.test(heading) ? heading : folderName);
  if (!SKILL_NAME.test(name) || name.length > 64) {
    return { problem: `its name ${JSON.stringify(name)} is not a skill name (letters and digits in groups joined by -, at most 64 characters)` };
  }
  const description = (front.description as string | undefined)?.trim() || firstParagraph(body);
  if (!description) return { problem: "it has no description (frontmatter description, or a first paragraph)" };
  if (description.length > MAX_DESCRIPTION) return { problem: `its description is ${description.length} characters, more than ${MAX_DESCRIPTION}` };
  return { name, description: description.replace(/\s+/g, " ") };
}

/** The frontmatter as an object (JSON first, then YAML), or what is wrong with it. */
function parseFront(raw: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    const doc = parseDocument(raw, { prettyErrors: false, uniqueKeys: true });
    if (doc.errors.length > 0) return `its frontmatter is neither JSON nor YAML (${doc.errors[0]!.message.split("\n")[0]})`;
    value = doc.toJS();
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) return "its frontmatter is not a mapping";
  return value as Record<string, unknown>;
}

/** The body's first paragraph that is not a heading, as one line. */
function firstParagraph(body: string): string {
  for (const block of body.split(/\n[ \t]*\n/)) {
    const lines = block
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    if (lines.length > 0) return lines.join(" ");
  }
  return "";
}
