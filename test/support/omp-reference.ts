/**
 * oh-my-pi's todo tool (the phases tool's reference), built at test time
 * from its published package: `npm pack` fetches the tarball (integrity
 * pinned), the one source file `src/tools/todo.ts` is bundled with esbuild,
 * and its imports from the rest of that project (UI, session and schema
 * packages) are replaced by small stand-ins. Nothing of it is committed; the
 * build is cached under node_modules/.cache.
 *
 * The stand-in for its argument schema accepts every value, so the
 * differential test feeds it only arguments of the right shape (shape
 * errors are ours alone, by design).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

export const REFERENCE = "@oh-my-pi/pi-coding-agent@18.3.4";
const INTEGRITY = "sha512-7lqUxRbpmS51vtOSul4jZ/VIvkpUUNTUz/I0QIU75itSzqwSs766CJ4/eH5Hl54QVI1/Gt/bSDrV/MC+Qf5neA==";
const CACHE = path.resolve(import.meta.dirname, "..", "..", "node_modules", ".cache", "omp-todo-18.3.4");

export type RefStatus = "pending" | "in_progress" | "completed" | "abandoned";
export interface RefPhase {
  name: string;
  tasks: { content: string; status: RefStatus }[];
}
export interface RefResult {
  content: { type: "text"; text: string }[];
  details: { phases: RefPhase[]; completedTasks?: { phase: string; content: string }[] };
  isError?: boolean;
}
export interface Reference {
  /** Runs one op the way the tool does, on a session holding `phases`; returns the result and the phases the session holds after. */
  run(phases: RefPhase[], args: Record<string, unknown>): Promise<{ result: RefResult; held: RefPhase[] }>;
  phasesToMarkdown(phases: RefPhase[]): string;
  markdownToPhases(markdown: string): { phases: RefPhase[]; errors: string[] };
}

/** Stand-ins for what todo.ts imports from the rest of its project (types vanish in the bundle). */
const STANDINS: Record<string, string> = {
  "@oh-my-pi/omptype": `
    const schema = () => { const check = (value) => value; check.array = schema; check.atLeastLength = () => check; check.describe = () => check; return check; };
    export function type() { return schema(); }
    type.errors = class {};`,
  "@oh-my-pi/pi-utils": `
    export const isRecord = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
    export const prompt = { render: (text) => text };`,
  "../prompts/tools/todo.md": `export default "todo";`,
  "./path-utils": `export const normalizePathLikeInput = (s) => s; export const resolveToCwd = (s) => s;`,
};
const TYPE_ONLY = ["@oh-my-pi/pi-tui/tools/todo", "@oh-my-pi/pi-agent-core", "../sdk", "../session/session-entries"];

function fetchSource(): string {
  const source = path.join(CACHE, "todo.ts");
  if (existsSync(source)) return source;
  mkdirSync(CACHE, { recursive: true });
  const packed = JSON.parse(execFileSync("npm", ["pack", REFERENCE, "--json", "--pack-destination", CACHE], { encoding: "utf8" })) as {
    filename: string;
    integrity: string;
  }[];
  const tarball = packed[0]!;
  if (tarball.integrity !== INTEGRITY) throw new Error(`${REFERENCE}: integrity ${tarball.integrity} is not the pinned ${INTEGRITY}`);
  execFileSync("tar", ["xzf", path.join(CACHE, path.basename(tarball.filename)), "-C", CACHE, "package/src/tools/todo.ts"]);
  writeFileSync(source, readFileSync(path.join(CACHE, "package", "src", "tools", "todo.ts")));
  return source;
}

async function bundle(): Promise<string> {
  const out = path.join(CACHE, "todo.bundle.mjs");
  if (existsSync(out)) return out;
  await build({
    entryPoints: [fetchSource()],
    outfile: out,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "silent",
    plugins: [
      {
        name: "stand-ins",
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === "entry-point") return undefined;
            if (args.path in STANDINS) return { path: args.path, namespace: "standin" };
            if (TYPE_ONLY.includes(args.path)) return { path: args.path, namespace: "empty" };
            return { errors: [{ text: `unexpected import ${args.path}: give it a stand-in` }] };
          });
          b.onLoad({ filter: /.*/, namespace: "standin" }, (args) => ({ contents: STANDINS[args.path]!, loader: "js" }));
          b.onLoad({ filter: /.*/, namespace: "empty" }, () => ({ contents: "export {};", loader: "js" }));
        },
      },
    ],
  });
  return out;
}

interface RefModule {
  TodoTool: new (session: unknown) => { execute(id: string, params: unknown): Promise<RefResult> };
  phasesToMarkdown(phases: RefPhase[]): string;
  markdownToPhases(markdown: string): { phases: RefPhase[]; errors: string[] };
}

export async function loadReference(): Promise<Reference> {
  const mod = (await import(/* @vite-ignore */ pathToFileURL(await bundle()).href)) as RefModule;
  return {
    run: async (phases, args) => {
      let held = structuredClone(phases);
      const session = { getTodoPhases: () => held, setTodoPhases: (next: RefPhase[]) => (held = structuredClone(next)), getSessionFile: () => undefined };
      const result = await new mod.TodoTool(session).execute("call-1", args);
      return { result, held };
    },
    phasesToMarkdown: mod.phasesToMarkdown,
    markdownToPhases: mod.markdownToPhases,
  };
}
