import { parseDocument } from "yaml";
import { z } from "zod";
import { approvalPolicy } from "../config/schema.js";
import { describeIssues } from "../validation.js";

/**
 * AGENT.md frontmatter: a YAML mapping between `---` lines at the top of the
 * file. Anything wrong with it is reported as `problems`, and the caller
 * fails closed (the agent gets no tools).
 */

/** The keys the core reads; features add theirs (`FrontmatterKeys`). */
export const frontmatterSchema = z.looseObject({
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  workspace: z.string().min(1).optional(),
  tools: z
    .array(z.string().min(1))
    .nullable()
    .optional()
    .transform((v) => (v === null ? [] : v)),
  allow_agents: z
    .array(z.string().min(1))
    .nullable()
    .optional()
    .transform((v) => (v === null ? [] : v)),
  /** The approval policy of some of its tools, over tools.<key>.approval: `{exec: ask, write_file: ask}`. */
  approval: z.record(z.string().min(1), approvalPolicy).optional(),
});

export type Frontmatter = z.output<typeof frontmatterSchema>;

const KNOWN_KEYS = new Set(Object.keys(frontmatterSchema.shape));

/** Frontmatter keys a feature reads, with their schemas (e.g. `todo_style`). */
export type FrontmatterKeys = Readonly<Record<string, z.ZodType>>;

export interface ParsedFrontmatter extends Frontmatter {
  /** The values of the features' keys that are present. */
  settings: Record<string, unknown>;
}

export interface ParsedAgentFile {
  /** The validated frontmatter, or null when it is missing or broken. */
  frontmatter: ParsedFrontmatter | null;
  /** True when a frontmatter block was present (even a broken one). */
  hasFrontmatter: boolean;
  body: string;
  /** Why the frontmatter could not be used: the agent must fail closed. */
  problems: string[];
  /** Things worth a warning that do not change behaviour. */
  notes: string[];
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^(?:---|\.\.\.)[ \t]*$/m;

export function parseAgentFile(text: string, extra: FrontmatterKeys = {}): ParsedAgentFile {
  const open = OPEN.exec(text);
  if (!open) {
    if (/^\uFEFF?---[ \t]*$/.test(text)) {
      return { frontmatter: null, hasFrontmatter: true, body: "", problems: ["frontmatter is not closed by a --- line"], notes: [] };
    }
    return {
      frontmatter: { tools: undefined, allow_agents: undefined, settings: {} },
      hasFrontmatter: false,
      body: text.replace(/^\uFEFF/, "").trim(),
      problems: [],
      notes: [],
    };
  }
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) {
    return { frontmatter: null, hasFrontmatter: true, body: rest.trim(), problems: ["frontmatter is not closed by a --- line"], notes: [] };
  }
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length).trim();
  const doc = parseDocument(yamlText, { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      frontmatter: null,
      hasFrontmatter: true,
      body,
      problems: [...new Set(doc.errors.map((e) => `YAML: ${e.message.split("\n")[0]}`))],
      notes: [],
    };
  }
  const data: unknown = doc.toJS() ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { frontmatter: null, hasFrontmatter: true, body, problems: ["frontmatter must be a YAML mapping"], notes: [] };
  }
  const parsed = frontmatterSchema.safeParse(data, { reportInput: true, jitless: true });
  const features = z
    .object(Object.fromEntries(Object.entries(extra).map(([key, schema]) => [key, schema.optional()])))
    .safeParse(data, { reportInput: true, jitless: true });
  const problems = [...(parsed.success ? [] : describeIssues(parsed.error)), ...(features.success ? [] : describeIssues(features.error))];
  if (!parsed.success || !features.success) return { frontmatter: null, hasFrontmatter: true, body, problems, notes: [] };
  const notes = Object.keys(data)
    .filter((key) => !KNOWN_KEYS.has(key) && !Object.hasOwn(extra, key))
    .map((key) => `unknown frontmatter key "${key}" ignored`);
  const settings = Object.fromEntries(Object.entries(features.data).filter(([, value]) => value !== undefined));
  const frontmatter: ParsedFrontmatter = { ...parsed.data, settings };
  return { frontmatter, hasFrontmatter: true, body, problems: [], notes };
}
