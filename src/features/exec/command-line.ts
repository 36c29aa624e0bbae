import type { Command, SyntaxNode } from "unbash";

type Unbash = typeof import("unbash");
let unbash: Unbash | undefined;
let loading: Promise<Unbash> | undefined;

/**
 * Loads the shell parser (unbash, some 150 KB of JavaScript): with the first
 * command judged, not when the gateway starts, which most turns never need.
 * `analyse` needs it loaded.
 */
export async function loadShellParser(): Promise<void> {
  unbash ??= await (loading ??= import("unbash"));
}

/**
 * A command line taken apart the way the shell will run it (unbash, a Bash
 * parser): every simple command in it, wherever it stands (a pipeline, a
 * `;`/`&&`/`||` chain, a subshell, a function body, `$(…)` and backticks,
 * and the scripts of `sh -c` and `eval`), each with its words as the shell
 * sees them once quotes and escapes are removed. The guard judges these,
 * not the raw text, so `r'm' -rf /` is `rm -rf /`.
 */

export interface ShellWord {
  /** The word with quotes and escapes removed (an expansion stays as written: `$HOME`). */
  value: string;
  /** Written out: no expansion, substitution, glob or brace in it. */
  literal: boolean;
  /** Starts with an expansion (`$X/…`, `${X}…`, `$(…)…`): the shell decides what it is. */
  expanded: boolean;
}

export interface SimpleCommand {
  /** The program as written (undefined for a line of assignments or redirections only). */
  program: ShellWord | undefined;
  args: ShellWord[];
  /** Targets of its redirections (`> out.txt`), and values of its assignments (`X=/etc`). */
  others: ShellWord[];
  /** The command written out plainly: the program's base name, its words, its redirections (`rm -rf /`, `echo a > /dev/sda`). */
  plain: string;
}

export interface CommandLine {
  commands: SimpleCommand[];
  /** Scripts run by `sh -c`, `bash -c`, `eval`...: judged like the line itself. */
  scripts: string[];
  /** What the parser could not read ("unterminated single quote at 5"): such a line is refused. */
  errors: string[];
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "busybox"]);
const LITERAL_PARTS = new Set(["Literal", "SingleQuoted", "AnsiCQuoted", "LocaleString"]);
const EXPANSIONS = new Set(["SimpleExpansion", "ParameterExpansion", "CommandExpansion", "ArithmeticExpansion", "ProcessSubstitution"]);
/** How deep `sh -c "sh -c '…'"` is followed before the line is refused. */
const MAX_DEPTH = 4;

type Part = { readonly type: string; readonly parts?: readonly Part[] };
type WordNode = { readonly value: string; readonly parts?: readonly Part[] };

const isLiteralPart = (part: Part): boolean => LITERAL_PARTS.has(part.type) || (part.type === "DoubleQuoted" && (part.parts ?? []).every(isLiteralPart));

function shellWord(word: WordNode): ShellWord {
  const parts = word.parts ?? [];
  const first = parts[0];
  const leading = first?.type === "DoubleQuoted" ? first.parts?.[0] : first;
  return { value: word.value, literal: parts.every(isLiteralPart), expanded: leading !== undefined && EXPANSIONS.has(leading.type) };
}

const baseName = (program: string) => program.slice(program.lastIndexOf("/") + 1);

/** The command line taken apart (loadShellParser first). */
export function analyse(source: string, depth = 0): CommandLine {
  if (!unbash) throw new Error("the shell parser is not loaded: await loadShellParser() first");
  const { forEachChild, parse } = unbash;
  const line: CommandLine = { commands: [], scripts: [], errors: [] };
  const script = parse(source);
  for (const error of script.errors ?? []) line.errors.push(`${error.message} at ${error.pos}`);
  const visit = (node: SyntaxNode): void => {
    const errors = (node as { errors?: readonly { message: string; pos: number }[] }).errors;
    if (node !== script && node.type === "Script") for (const error of errors ?? []) line.errors.push(`${error.message} (in a substitution)`);
    if (node.type === "Command") add(line, node, depth);
    forEachChild(node, visit);
  };
  visit(script);
  return line;
}

function add(line: CommandLine, node: Command, depth: number): void {
  const program = node.name ? shellWord(node.name) : undefined;
  const args: ShellWord[] = [];
  const others: ShellWord[] = [];
  for (const arg of node.args) {
    if (arg.type === "Word") args.push(shellWord(arg));
    else if (arg.value.type === "Word") others.push(shellWord(arg.value));
  }
  for (const assignment of node.prefix) if (assignment.type === "Assignment" && assignment.value.type === "Word") others.push(shellWord(assignment.value));
  const redirections: string[] = [];
  for (const redirect of node.redirects) {
    if (redirect.type === "HereDoc" || !redirect.target) continue;
    others.push(shellWord(redirect.target));
    redirections.push(`${redirect.operator} ${redirect.target.value}`);
  }
  const words = [...(program ? [baseName(program.value)] : []), ...args.map((a) => a.value), ...redirections];
  line.commands.push({ program, args, others, plain: words.join(" ") });
  const nested = program ? nestedScript(baseName(program.value), args) : undefined;
  if (nested === undefined) return;
  if (depth >= MAX_DEPTH) {
    line.errors.push(`scripts nested more than ${MAX_DEPTH} deep (sh -c inside sh -c...)`);
    return;
  }
  line.scripts.push(nested);
  const inner = analyse(nested, depth + 1);
  line.commands.push(...inner.commands);
  line.scripts.push(...inner.scripts);
  line.errors.push(...inner.errors);
}

/** The script a command runs as shell code: `sh -c <script>` (any shell, flags joined as in `-ec`), `eval <words>`. */
function nestedScript(program: string, args: readonly ShellWord[]): string | undefined {
  if (program === "eval") return args.map((a) => a.value).join(" ");
  if (!SHELLS.has(program)) return undefined;
  // busybox sh -c …: the applet first.
  const from = program === "busybox" && args[0] && SHELLS.has(args[0].value) ? 1 : 0;
  for (let i = from; i < args.length; i++) {
    const flag = args[i]!.value;
    if (!flag.startsWith("-") || flag === "-" || flag === "--") break;
    if (/^-[a-z]*c[a-z]*$/i.test(flag)) return args[i + 1]?.value ?? "";
  }
  return undefined;
}
